import Foundation
@testable import Gateway
import NIOCore
import Replication
import Testing

@Suite struct RevisionStoreTests {
    @Test func sha1MatchesTheFIPSVectors() {
        #expect(SHA1.hash(Array("abc".utf8)).hexString == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hash(Array("".utf8)).hexString == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA1.hash(long).hexString == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test func editsMakeGenerationDigestIDsThatDependOnTheBody() throws {
        let database = GatewayDatabase(name: "db")
        let first = try database.put("a", body: ["x": .number("1")])
        #expect(first.hasPrefix("1-") && first.count == 42)
        let second = try database.put("a", body: ["x": .number("2")])
        #expect(second.hasPrefix("2-"))
        let other = GatewayDatabase(name: "db2")
        #expect(try other.put("a", body: ["x": .number("1")]) == first)
        #expect(database.document("a")?.history == [first])
        #expect(database.lastSequence == 2)
    }

    @Test func aBranchIsAConflictAndTheWinnerIsDeterministic() throws {
        let database = GatewayDatabase(name: "db")
        let base = try database.put("a", body: ["v": .number("1")])
        let left = IncomingRevision(docID: "a", revID: "2-" + String(repeating: "a", count: 40), history: [base],
                                    body: ByteBuffer(string: "{\"v\":2}"))
        let right = IncomingRevision(docID: "a", revID: "2-" + String(repeating: "b", count: 40), history: [base],
                                     body: ByteBuffer(string: "{\"v\":3}"))
        #expect(try database.insert(left) != .alreadyKnown)
        #expect(throws: GatewayError.self) { try database.insert(right, noConflicts: true) }
        try database.insert(right)
        let document = try #require(database.document("a"))
        #expect(document.currentRevID == right.revID)
        #expect(document.conflictingRevIDs == [left.revID])
        #expect(try database.insert(right) == .alreadyKnown)
    }

    @Test func proposedChangesFollowTheSpecRules() throws {
        let database = GatewayDatabase(name: "db")
        let first = try database.put("a", body: [:])
        let path = GatewayDatabase.defaultCollection
        #expect(database.proposedChangeStatus(docID: "new", revID: "1-abc", serverRevID: nil, in: path) == 0)
        #expect(database.proposedChangeStatus(docID: "a", revID: first, serverRevID: nil, in: path) == 304)
        #expect(database.proposedChangeStatus(docID: "a", revID: "2-x", serverRevID: first, in: path) == 0)
        #expect(database.proposedChangeStatus(docID: "a", revID: "2-x", serverRevID: nil, in: path) == 409)
        #expect(database.proposedChangeStatus(docID: "a", revID: "2-x", serverRevID: "1-other", in: path) == 409)
    }

    @Test func checkpointsUseMVCCRevisions() throws {
        let database = GatewayDatabase(name: "db")
        let rev = try database.setCheckpoint(client: "c", rev: nil, body: .object(["remote": .number("5")]))
        #expect(rev == "0-1")
        #expect(throws: GatewayError.self) { try database.setCheckpoint(client: "c", rev: nil, body: .object([:])) }
        #expect(try database.setCheckpoint(client: "c", rev: "0-1", body: .object([:])) == "0-2")
        #expect(database.checkpoint(client: "c")?.rev == "0-2")
    }

    @Test func changesSkipSupersededEntriesAndFilterByChannel() throws {
        let database = GatewayDatabase(name: "db")
        try database.put("a", body: ["channels": .array([.string("red")])])
        try database.put("b", body: ["channels": .string("blue")])
        try database.put("a", body: ["channels": .array([.string("red")]), "v": .number("2")])
        let all = database.changes(in: GatewayDatabase.defaultCollection, since: 0, limit: 10, filter: ChangesFilter())
        #expect(all.entries.map(\.docID) == ["b", "a"])
        #expect(all.through == 3)
        let red = database.changes(in: GatewayDatabase.defaultCollection, since: 0, limit: 10,
                                   filter: ChangesFilter(channels: ["red"]))
        #expect(red.entries.map(\.docID) == ["a"])
    }

    @Test func seedDataLoadsDocumentsChannelsAndAttachments() throws {
        let database = GatewayDatabase(name: "db")
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/demo-docs.json").path
        let count = try SeedData.load(from: path, into: database)
        #expect(count == 20)
        let photo = try #require(database.document("hotel_01_photo"))
        #expect(photo.channels.contains("hotels"))
        let body = try #require(JSONValue(parsing: photo.body))
        let digest = try #require(DocumentBlobs.references(in: body).first?.digest)
        #expect(database.hasAttachment(digest: digest))
    }
}
