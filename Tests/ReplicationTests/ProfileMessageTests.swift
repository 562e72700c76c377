import BLIPCore
import Testing
@testable import Replication

/// One hand-made message per profile, shaped as the seeds define it, and the line it reads as.
@Suite("Typed messages per profile")
struct ProfileMessageTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let request: BLIPMessage
        let reply: BLIPMessage?
        let summary: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "getCheckpoint", request: request("getCheckpoint", 1, [("client", "cp-1")]),
             reply: reply(1, [("rev", "0-3")], body: #"{"local":12,"remote":"100"}"#),
             summary: "getCheckpoint client=cp-1 → rev 0-3"),
        Case(name: "setCheckpoint", request: request("setCheckpoint", 2, [("client", "cp-1"), ("rev", "7-a")], body: #"{"remote":112}"#),
             reply: reply(2, [("rev", "8-b")]), summary: "setCheckpoint client=cp-1 rev 7-a → 8-b"),
        Case(name: "subChanges", request: request("subChanges", 3, [("since", #""100::5""#), ("continuous", "true"), ("batch", "200"),
                                                                    ("filter", "sync_gateway/bychannel"), ("channels", "a,b"),
                                                                    ("activeOnly", "true")], body: #"{"docIDs":["d1","d2"]}"#),
             reply: reply(3), summary: #"subChanges since="100::5" continuous batch=200 activeOnly filter=sync_gateway/bychannel channels=a,b docIDs=2 → ok"#),
        Case(name: "subChanges since NOW", request: request("subChanges", 4, [("since", "NOW"), ("continuous", "true"),
                                                                              ("versioning", "version-vectors")]),
             reply: nil, summary: "subChanges since=NOW continuous version-vectors"),
        Case(name: "changes", request: request("changes", 5, body: "[[100,\"doc-1\",\"\(revA1)\"],[101,\"doc-2\",\"\(revA3)\",true,120],[112,\"doc-3\",\"\(revA2)\"]]"),
             reply: reply(5, [("maxHistory", "20")], body: "[[\"\(revA2)\"],0]"),
             summary: "changes 3 revs seq 100…112, 1 deleted → wants 1 (maxHistory 20)"),
        Case(name: "proposeChanges", request: request("proposeChanges", 6, body: "[[\"a\",\"\(revA1)\"],[\"b\",\"\(revA3)\",\"\(revA2)\"],[\"c\",\"\(revA1)\",\"\"],[\"d\",\"\(revA1)\"]]"),
             reply: reply(6, body: "[0,409]"), summary: "proposeChanges 4 → 3×send 1×409"),
        Case(name: "rev", request: request("rev", 7, [("id", "doc-0001"), ("rev", revA3), ("history", "\(revA2),\(revA1)"), ("sequence", "12")],
                                           body: #"{"a":1,"_attachments":{"p.jpg":{"digest":"sha1-XYZ","length":900,"stub":true}},"pad":""# + String(repeating: "x", count: 1100) + #""}"#),
             reply: reply(7), summary: "rev doc-0001 3-a1b2… (1.2 KB, hist 2, 1 attachment) → ok"),
        Case(name: "norev", request: request("norev", 8, [("id", "doc-9"), ("rev", revA1), ("error", "404"), ("reason", "missing")], noReply: true),
             reply: nil, summary: "norev doc-9 1-0000… 404 (missing)"),
        Case(name: "getAttachment", request: request("getAttachment", 9, [("digest", "sha1-abcdefghijklmnopqrstuv")]),
             reply: reply(9, body: String(repeating: "z", count: 2048)), summary: "getAttachment sha1-abcdefg… → 2.0 KB"),
        Case(name: "proveAttachment", request: request("proveAttachment", 10, [("digest", "sha1-abc")], body: String(repeating: "n", count: 20)),
             reply: reply(10, body: "sha1-0123456789abcdef"), summary: "proveAttachment sha1-abc (nonce 20 B) → proof sha1-0123456…"),
        Case(name: "getRev", request: request("getRev", 11, [("id", "doc-1"), ("ifNotRev", revA1)]),
             reply: reply(11, [("rev", revA2)], body: #"{"x":1}"#), summary: "getRev doc-1 ifNotRev 1-0000… → 2-0000… (7 B)"),
        Case(name: "putRev", request: request("putRev", 12, [("id", "doc-1"), ("rev", revA2), ("history", revA1)], body: #"{"x":2}"#),
             reply: errorReply(12, code: 409, message: "conflict"), summary: "putRev doc-1 2-0000… (7 B, hist 1) → ERR HTTP 409: conflict"),
        Case(name: "unsubChanges", request: request("unsubChanges", 13), reply: reply(13), summary: "unsubChanges → ok"),
        Case(name: "getCollections", request: request("getCollections", 14, body: #"{"collections":["inv.hotels","users"],"checkpoint_ids":["c1","c2"]}"#),
             reply: reply(14, body: #"[{"rev":"0-1","remote":5},{}]"#), summary: "getCollections inv.hotels, _default.users → 1 checkpoint(s), 1 new, 0 missing"),
        Case(name: "PING", request: request("PING", 15), reply: reply(15), summary: "PING → ok"),
        Case(name: "unknown profile", request: request("echo", 16, body: "hello"), reply: reply(16, body: "hello"), summary: "echo (5 B) → (5 B)"),
    ]

    @Test("reads as the protocol story", arguments: cases)
    func typed(_ item: Case) {
        let typedRequest = ReplicationMessage(item.request)
        #expect(typedRequest.violations.isEmpty, "\(typedRequest.violations)")
        guard let answer = item.reply else {
            #expect(typedRequest.summary == item.summary)
            #expect(Self.written(typedRequest) == item.summary)
            return
        }
        let typedReply = ReplicationMessage(answer, answering: typedRequest)
        #expect(typedReply.violations.isEmpty, "\(typedReply.violations)")
        #expect(typedReply.summary == item.summary)
        #expect(Self.written(typedReply) == item.summary)
    }

    /// The summary as ``ReplicationMessage/writeSummary(into:)`` writes it: measured in a buffer
    /// too small for it, then written into one of the length it gave.
    static func written(_ message: ReplicationMessage) -> String {
        var small = [UInt8](repeating: 0, count: 4)
        let length = small.withUnsafeMutableBufferPointer { message.writeSummary(into: $0) }
        var room = [UInt8](repeating: 0, count: length)
        let again = room.withUnsafeMutableBufferPointer { message.writeSummary(into: $0) }
        #expect(again == length)
        return String(decoding: room, as: UTF8.self)
    }

    @Test("a summary longer than the line writer's stack buffer reads whole, in a collection, and written into a buffer the same")
    func longSummaries() {
        let channels = (0..<120).map { "channel-\($0)" }.joined(separator: ",")
        let context = MessageContext(collections: [CollectionPath(parsing: "inv.hotels")])
        let sent = ReplicationMessage(request("subChanges", 3, [("collection", "0"), ("channels", channels)]), context: context)
        let answer = ReplicationMessage(reply(3), answering: sent, context: context)
        let expected = "[inv.hotels] subChanges since=start one-shot channels=\(channels) → ok"
        #expect(expected.utf8.count > LineWriter.stackCapacity)
        #expect(answer.summary == expected)
        #expect(Self.written(answer) == expected)
    }

    @Test("a reply whose request was not seen reads by its number; an unknown profile's by its size")
    func repliesWithoutTheirRequest() {
        let orphan = ReplicationMessage(reply(16, body: "hello"))
        #expect(orphan.summary == "reply #16 → (5 B)")
        var withoutProfile = BLIPMessage(type: .request, number: 17, properties: Properties([("seq", "1")]), body: bytes("abc"))
        withoutProfile.number = 17
        let unnamed = ReplicationMessage(withoutProfile)
        #expect(unnamed.summary == "(no profile) (3 B)")
    }

    @Test("changes entries and the reply's ancestor lists")
    func changesFields() throws {
        let (sent, answer) = exchange(request("changes", 1, body: "[[\"s1\",\"d\",\"\(revA1)\",1,42],[7,\"e\",\"\(revA2)\"]]"),
                                      reply(1, body: "[null,[\"\(revA1)\"]]"))
        guard case .changes(let changes) = sent.content, case .changesReply(let wants) = answer.content else {
            Issue.record("not typed as changes")
            return
        }
        #expect(changes.entries[0] == .init(sequence: .string("s1"), docID: "d", revID: revA1, deleted: true, bodySize: 42))
        #expect(wants.answer(at: 0) == .notWanted)
        #expect(wants.answer(at: 1) == .wanted(knownAncestors: [revA1]))
        #expect(wants.answer(at: 5) == .notWanted)
    }

    @Test("a rev's _attachments are listed with their digests")
    func revAttachments() {
        let typed = ReplicationMessage(request("rev", 1, [("id", "d"), ("rev", revA1)],
                                               body: #"{"_attachments":{"b":{"digest":"sha1-B","length":3},"a":{"digest":"sha1-A","stub":true}}}"#))
        guard case .rev(let rev) = typed.content else { return #expect(Bool(false)) }
        #expect(rev.attachments.map(\.digest) == ["sha1-A", "sha1-B"])
        #expect(rev.attachments[0].isStub)
    }

    @Test("id and rev may come from the body's _id and _rev")
    func revFromBody() {
        let typed = ReplicationMessage(request("rev", 1, body: "{\"_id\":\"d\",\"_rev\":\"\(revA1)\",\"_deleted\":true}"))
        guard case .rev(let rev) = typed.content else { return #expect(Bool(false)) }
        #expect(rev.docID == "d" && rev.revID == revA1 && rev.deleted)
        #expect(typed.violations.isEmpty)
    }

    @Test("after getCollections a collection index reads as scope.collection")
    func collectionNames() {
        let context = MessageContext(collections: [CollectionPath(parsing: "inv.hotels")])
        let typed = ReplicationMessage(request("changes", 1, [("collection", "0")], body: "[]"), context: context)
        #expect(typed.summary == "[inv.hotels] changes 0 revs (caught up)")
        let outside = ReplicationMessage(request("changes", 2, [("collection", "3")], body: "[]"), context: context)
        #expect(outside.violations.map(\.description) == ["collection index 3 is outside the 1 collection(s) resolved by getCollections"])
    }
}
