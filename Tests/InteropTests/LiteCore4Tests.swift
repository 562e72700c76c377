import Foundation
import Gateway
import Relay
import Replication
import Testing

/// LiteCore 4.0's `cblite` with a version-vector database, which offers only
/// `BLIP_3+CBMobile_4` when it pushes, replicating with the embedded gateway directly and through
/// the relay. Opt-in: set `BLIPSCOPE_CBLITE4` to the tool's path. Every run ends with LiteCore
/// done, 0 decode errors at the relay and no protocol violations or findings from the analyzer.
@Suite(.serialized, .enabled(if: CBLite.available4, "set BLIPSCOPE_CBLITE4 to a cblite 4.0 binary"))
struct LiteCore4Tests {
    @Test(arguments: [false, true])
    func pushAndPullThreeHundredDocumentsWithLargeOnesAndDeletions(throughRelay: Bool) async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start()
        let url = throughRelay ? harness.url() : "ws://127.0.0.1:\(harness.gateway.port)/db"
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(300), into: source)
        let pushed = try cblite.run(["push", source, url])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 300 docs"), "\(pushed.output)")
        #expect(harness.database.documentCount() == 300)
        let stored = try #require(harness.database.document("doc-0100")?.currentVersion)
        #expect(stored.current.contains("@") && !stored.current.contains("*"), "the client's absolute version")

        for id in ["doc-0001", "doc-0002", "doc-0100"] { _ = try cblite.run(["rm", source, id]) }
        _ = try cblite.run(["put", "--update", source, "doc-0003", #"{"edited":true}"#])
        let again = try cblite.run(["push", source, url])
        #expect(again.status == 0 && again.output.contains("Completed 4 docs"), "\(again.output)")
        #expect(harness.database.document("doc-0100")?.isDeleted == true)

        let copy = try cblite.vectorDatabase("copy")
        let pulled = try cblite.run(["pull", "-x", copy, url])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 297 docs"), "\(pulled.output)")
        #expect(try cblite.documentIDs(copy).count == 297)
        let listed = try cblite.run(["ls", "-l", copy]).output
        #expect(listed.contains(String(stored.current.prefix(16))) || listed.contains("@"), "versions, not rev-tree IDs")
        if throughRelay { harness.checkVersionVectorAnalysis() }
        try await harness.shutdown()
    }

    @Test func aBlobOfSeveralMegabytesTravelsBothWays() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let harness = try await InteropHarness.start(databases: ["db", "other"], seed: { database in
            _ = try database.put("photo", body: ["title": .string("a picture")],
                                 attachments: ["photo.png": Attachment(contentType: "image/png", data: blob)])
        })
        let local = try cblite.vectorDatabase("local")
        let pulled = try cblite.run(["pull", "-x", local, harness.url()])
        #expect(pulled.status == 0, "\(pulled.output)")
        #expect(cblite.blobCount(local) == 1, "LiteCore fetched the blob with getAttachment")
        let pushed = try cblite.run(["push", local, harness.url("other")])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 1 docs"), "\(pushed.output)")
        #expect(harness.databases[1].hasAttachment(digest: GatewayDatabase.attachmentDigest(of: blob)))
        #expect(harness.databases[1].document("photo")?.currentVersion?.current
                == harness.database.document("photo")?.currentVersion?.current, "the gateway's own version, kept")
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    @Test func aConflictingPushKeepsTheFirstVersionAndLiteCoreGetsItsVersion() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(seed: { try $0.put("shared", body: ["v": .number("1")]) })
        let alice = try cblite.vectorDatabase("alice"), bob = try cblite.vectorDatabase("bob")
        for database in [alice, bob] { #expect(try cblite.run(["pull", "-x", database, harness.url()]).status == 0) }
        _ = try cblite.run(["put", "--update", alice, "shared", #"{"v":"alice"}"#])
        _ = try cblite.run(["put", "--update", bob, "shared", #"{"v":"bob"}"#])
        #expect(try cblite.run(["push", alice, harness.url()]).output.contains("Completed 1 docs"))
        let alices = try #require(harness.database.document("shared")?.currentVersion?.current)
        let refused = try cblite.run(["push", bob, harness.url()])
        #expect(refused.status == 0 && refused.output.contains("Completed 0 docs"), "\(refused.output)")
        #expect(harness.database.document("shared")?.currentVersion?.current == alices)
        let conflicts = harness.events.summaries.compactMap(\.replication).map(\.conflicts).reduce(0, +)
        #expect(conflicts == 1)
        // Bob pulls Alice's version: LiteCore keeps it as a conflict for the app to resolve.
        let pulled = try cblite.run(["pull", bob, harness.url()])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 1 docs"), "\(pulled.output)")
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    @Test func continuousPushAndPull() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(seed: { try $0.put("first", body: ["n": .number("1")]) })
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(120, prefix: "live"), into: source)
        let push = try cblite.start(["push", "--continuous", source, harness.url()])
        try await withDeadline(.seconds(60)) { await harness.database.wait { $0.documentCount() == 121 } }
        let pushStopped = try push.stop()
        #expect(!pushStopped.output.contains("ERROR"), "\(pushStopped.output)")

        let local = try cblite.vectorDatabase("local")
        let pull = try cblite.start(["pull", "--continuous", local, harness.url()])
        try await cblite.waitForDocuments(local, count: 121)
        // An edit made on the gateway gets a version of the gateway's own, which LiteCore takes.
        _ = try harness.database.put("later", body: ["n": .number("2")])
        try await cblite.waitForDocuments(local, count: 122)
        let stopped = try pull.stop()
        #expect(!stopped.output.contains("ERROR"), "\(stopped.output)")
        #expect(try cblite.documentIDs(local).count == 122)
        harness.checkVersionVectorAnalysis(findings: false)
        try await harness.shutdown()
    }
}

extension GatewayDatabase {
    /// Returns once `condition` holds, re-checked on every change of the database.
    func wait(until condition: @escaping @Sendable (GatewayDatabase) -> Bool) async {
        let (changes, signal) = AsyncStream<Void>.makeStream()
        let token = addObserver { signal.yield() }
        defer { removeObserver(token) }
        if condition(self) { return }
        for await _ in changes where condition(self) { return }
    }
}
