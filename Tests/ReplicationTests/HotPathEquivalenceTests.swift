import BLIPCore
import Testing
@testable import Replication

/// The analyzer's fast paths (one-pass property reading, streaming changes and proposeChanges
/// scanning) against the strict JSON parser's reading of the same bodies.
@Suite("Fast paths read what the strict path reads")
struct HotPathEquivalenceTests {
    @Test("every known property name is recognised from its bytes")
    func propertyNames() {
        for name in PropertyName.allCases {
            var text = name.rawValue
            let matched = text.withUTF8 { PropertyName.matching(UnsafeRawBufferPointer($0)) }
            #expect(matched == name)
        }
        var unknown = "revs"
        #expect(unknown.withUTF8 { PropertyName.matching(UnsafeRawBufferPointer($0)) } == nil)
    }

    static let changesBodies = [
        "[]", " [ ] ", "[[1,\"d\",\"\(revA1)\"]]", "[[\"s1\",\"d\",\"\(revA1)\",1,42],[7,\"e\",\"\(revA2)\"]]",
        "[[-1.5e3,\"d\",\"\(revA1)\",true],[2,\"dé\",\"\(revA2)\",null,0],[3,\"x\",\"\(revA3)\",\"no\"],[4,\"y\",\"\(revA1)\",-0]]",
        "[[1,\"d\",\"\(revA1)\",0, 12 ] ,\n[2,\"e\",\"\(revA2)\",false]]\t",
    ]

    @Test("changes bodies the scanner takes give the entries the tree gives", arguments: changesBodies)
    func changes(_ body: String) throws {
        let scanned = try #require(ChangesRequest.scanEntries(bytes(body)))
        let items = try #require(try JSONParser.parse(body).arrayValue)
        #expect(scanned.count == items.count)
        for (entry, item) in zip(scanned, items) {
            let fields = try #require(item.arrayValue)
            #expect(entry.sequence == fields[0])
            #expect(entry.docID == fields[1].stringValue && entry.revID == fields[2].stringValue)
            #expect(entry.deleted == (fields.count >= 4 ? fields[3].isTruthy : false))
            #expect(entry.bodySize == (fields.count == 5 ? fields[4].intValue : nil))
        }
    }

    @Test("bodies the scanner leaves to the strict path", arguments: [
        "", "[", "[]x", "[[1,\"d\"]]", "[[1,\"d\\u0041\",\"\(revA1)\"]]", "[[{\"a\":1},\"d\",\"\(revA1)\"]]",
        "[[1,\"d\",\"\(revA1)\",false,-5]]", "[[1,\"d\",\"\(revA1)\",false,1.5]]", "[[01,\"d\",\"\(revA1)\"]]",
        "[[1,\"d\",\"\(revA1)\",2.5]]", "[[1,\"d\",\"\(revA1)\"],]", "{\"a\":1}", "[[1,\"d\",\"\(revA1)\",true,1,2]]",
    ])
    func changesLeftToStrictPath(_ body: String) {
        #expect(ChangesRequest.scanEntries(bytes(body)) == nil)
    }

    @Test("changes replies, proposeChanges and their replies scan as the tree reads them")
    func replies() throws {
        let answers = try #require(ChangesReply.scanAnswers(bytes("[null, 0, [], [\"\(revA1)\",\"\(revA2)\"], -0]")))
        #expect(answers == [.notWanted, .notWanted, .wanted(knownAncestors: []), .wanted(knownAncestors: [revA1, revA2]), .notWanted])
        #expect(ChangesReply.scanAnswers(bytes("[1]")) == nil)
        #expect(ChangesReply.scanAnswers(bytes("[[1]]")) == nil)
        let proposed = try #require(ProposeChangesRequest.scanEntries(bytes("[[\"a\",\"\(revA2)\",\"\(revA1)\",10],[\"b\",\"\(revA1)\",\"\"]]")))
        #expect(proposed == [.init(docID: "a", revID: revA2, serverRevID: revA1, bodySize: 10),
                             .init(docID: "b", revID: revA1, serverRevID: nil, bodySize: nil)])
        #expect(ProposeChangesRequest.scanEntries(bytes("[[\"a\",\"\(revA1)\",null]]")) == nil)
        #expect(ProposeChangesReply.scanStatuses(bytes("[0, 304,409]")) == [0, 304, 409])
        #expect(ProposeChangesReply.scanStatuses(bytes("[0,-1]")) == nil)
    }

    @Test("plain integer properties skip the parser; anything else still goes through it")
    func plainIntegers() {
        for text in ["0", "12", "-7", "12345678901234567890"] { #expect(MessageReader.isPlainInteger(text), "\(text)") }
        for text in ["", "-", "01", "1.0", "1e3", "\"1\"", " 1", "+1"] { #expect(!MessageReader.isPlainInteger(text), "\(text)") }
    }
}

@Suite("Profile lookups")
struct ProfileLookupTests {
    @Test("the hand-written raw-value initializer and ordinals agree with the cases")
    func rawValues() {
        for (index, profile) in ReplicationProfile.allCases.enumerated() {
            #expect(ReplicationProfile(rawValue: profile.rawValue) == profile)
            #expect(profile.ordinal == index)
        }
        for text in ["", "Rev", "revs", "ping", "getcheckpoint", "proposeChange"] {
            #expect(ReplicationProfile(rawValue: text) == nil, "\(text)")
        }
    }
}

@Suite("Validating skips and rev bodies")
struct RevBodyScanningTests {
    static let documents: [String] = [
        "", "[", "[1,]", "{\"a\" 1}", "tru", "01", "\"\\x\"", "[1] x", "\"\u{01}\"", "-", "1.", "[\"\\ud83d\"]x",
        "{}", "[]", "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\\n\",\"d\":-0.5e+3}", "\"\\ud83d\\ude00\"", "\"\\u12\"",
        "{\"a\":1,}", "{,}", "[true,false,null]", "{\"a\":1 \"b\":2}", "\"é\"", "[\"a\\\\\"]",
        String(repeating: "[", count: 63) + String(repeating: "]", count: 63),
        String(repeating: "[", count: 64) + String(repeating: "]", count: 64),
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
    ]

    @Test("skipValue accepts exactly what the parser accepts", arguments: documents)
    func skipMatchesParser(_ text: String) {
        let parsed = (try? JSONParser.parse(text)) != nil
        var copy = text
        let skipped = copy.withUTF8 { bytes in
            var scanner = JSONScanner(UnsafeRawBufferPointer(bytes))
            return scanner.skipValue(depth: 0) && scanner.isAtEnd
        }
        #expect(skipped == parsed)
    }

    static let bodies: [String] = [
        #"{"n":1,"text":"a\"b","_attachments":{"p":{"digest":"sha1-X","length":3,"stub":true}}}"#,
        #"{"_id":"d","_rev":"1-a","_deleted":1,"_attachments":{}}"#,
        #"{"_id":5,"_deleted":"yes","_id":"again","_attachments":[1],"_attachments":{"q":{"digest":"sha1-Q"}}}"#,
        #"{"x":[{"y":{"z":[]}}],"_deleted":false}"#,
    ]

    @Test("rev body fields scanned match the parsed tree's", arguments: bodies)
    func revBodies(_ text: String) throws {
        let fields = try #require(RevBodyFields.scan(bytes(text)))
        let members = try #require(try JSONParser.parse(text).objectValue)
        #expect(fields.id == members["_id"]?.stringValue)
        #expect(fields.rev == members["_rev"]?.stringValue)
        #expect(fields.deleted == (members["_deleted"]?.isTruthy == true))
        #expect(fields.attachments == members["_attachments"])
    }

    @Test("rev bodies left to the strict path", arguments: [
        "[1]", #"{"_i\u0064":"d"}"#, #"{"_id":"\u0064"}"#, #"{"_deleted":1.5}"#, #"{"a":1"#, #"{"a":1} x"#,
    ])
    func revBodiesLeft(_ text: String) {
        #expect(RevBodyFields.scan(bytes(text)) == nil)
    }
}

@Suite("Known properties")
struct KnownPropertiesTests {
    @Test("first occurrence wins, inline slots and overflow alike")
    func firstOccurrence() {
        var known = KnownProperties()
        let names = Array(PropertyName.allCases.prefix(10))
        for (index, name) in names.enumerated() { known.add(name, value: "v\(index)") }
        for (index, name) in names.enumerated() {
            known.add(name, value: "again")
            #expect(known.value(of: name) == "v\(index)")
        }
        #expect(known.value(of: .sendReplacementRevs) == nil)
    }

    @Test("a profile is read from bytes as the profile's own name")
    func profileBytes() {
        var text = "proposeChanges"
        #expect(text.withUTF8 { ReplicationProfile(utf8: UnsafeRawBufferPointer($0)) } == .proposeChanges)
        var other = "proposeChangez"
        #expect(other.withUTF8 { ReplicationProfile(utf8: UnsafeRawBufferPointer($0)) } == nil)
    }
}

/// The relay moves every message's reading between its analyzer, request boxes and events by
/// value: its content stays small whatever shape a case reads (cases with a shape are boxed).
@Suite struct MessageValueSizeTests {
    @Test func contentIsATagAndAPointerOrASmallCount() {
        #expect(MemoryLayout<ReplicationMessage.Content>.size <= 17)
        #expect(MemoryLayout<ReplicationMessage>.size <= 128)
        // A boxed shape still reads, copies and compares as a value.
        let request = BLIPMessage.request(profile: "norev", properties: ["id": "d", "rev": "1-a", "error": "404"])
        let content = ReplicationMessage(request).content
        guard case .norev(let norev) = content else {
            Issue.record("norev read as \(content)")
            return
        }
        #expect(norev.docID == "d" && norev.revID == "1-a" && norev.error == 404)
        var copy = content
        #expect(copy == content)
        copy = ReplicationMessage(BLIPMessage.request(profile: "norev", properties: ["id": "e", "rev": "1-a"])).content
        #expect(copy != content)
        #expect(content != .emptyReply)
    }
}
