import BLIPCore
import Foundation
import Gateway
import Logging
import NIOPosix
import Policy
import Relay
import Replay
import Testing

/// The relay in front of LiteCore's own listener (a Couchbase Lite peer-to-peer listener), with
/// `cblite` as the client: LiteCore on both sides. Opt-in: `BLIPSCOPE_CBLITE` and
/// `BLIPSCOPE_LITECORE_PEER`.
@Suite(.serialized, .enabled(if: CBLite.available && LiteCorePeer.available,
                             "set BLIPSCOPE_CBLITE and BLIPSCOPE_LITECORE_PEER"))
struct LiteCoreListenerTests {
    /// A relay whose upstream is a LiteCore listener.
    static func relay(to peer: LiteCorePeer, _ configure: (inout RelayConfiguration) throws -> Void = { _ in })
        async throws -> (RelayServer, Int, EventCounter, MultiThreadedEventLoopGroup) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: peer.port)))
        configuration.listenPort = 0
        try configure(&configuration)
        let events = EventCounter()
        let relay = RelayServer(configuration: configuration, group: group, logger: Logger(label: "interop") { _ in SwiftLogNoOpLogHandler() },
                                observers: [events])
        let address = try await relay.start()
        return (relay, address.port!, events, group)
    }

    @Test func pushAndPullThroughTheRelayToALiteCoreListener() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let peer = try LiteCorePeer(name: "listener", in: cblite.directory)
        defer { peer.stop() }
        let (relay, port, events, group) = try await Self.relay(to: peer)
        let url = "ws://127.0.0.1:\(port)/\(peer.name)"
        let source = try cblite.database("source", holding: mixedDocuments(500))
        let pushed = try cblite.run(["push", source, url])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 500 docs"), "the listener took the relay's upgrade: \(pushed.output)")
        let copy = try cblite.database("copy")
        let pulled = try cblite.run(["pull", copy, url])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 500 docs"), "\(pulled.output)")
        #expect(events.decodeErrors == 0)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// 300 pushed revs denied: the passive LiteCore gets a norev for each, so it never holds 200
    /// requested revisions and keeps answering; the other documents arrive and it stays up.
    @Test func deniedPushedRevsDoNotStallOrBreakThePassivePeer() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let peer = try LiteCorePeer(name: "listener", in: cblite.directory)
        defer { peer.stop() }
        let (relay, port, events, group) = try await Self.relay(to: peer) { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: """
                rules:
                  - { name: drafts, match: { from: client, type: request, profile: rev, doc: "draft-*" }, action: { deny: { code: 403 } } }
                """))
        }
        let url = "ws://127.0.0.1:\(port)/\(peer.name)"
        let documents = mixedDocuments(300, prefix: "draft", largeEvery: 1000) + mixedDocuments(50, prefix: "note", largeEvery: 1000)
        let pushed = try cblite.run(["push", try cblite.database("source", holding: documents), url], seconds: 60)
        #expect(pushed.status == 0 && pushed.output.contains("Completed 50 docs"), "\(pushed.output)")
        #expect(peer.isRunning)
        let copy = try cblite.database("copy")
        let pulled = try cblite.run(["pull", copy, url])
        #expect(try cblite.documentIDs(copy).count == 50, "\(pulled.output)")
        #expect(events.decodeErrors == 0)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// A captured LiteCore push replayed, in the client role, against a fresh LiteCore listener.
    @Test func aCapturedPushReplayedToAFreshListener() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let captures = cblite.directory.appendingPathComponent("captures")
        let first = try LiteCorePeer(name: "listener", in: cblite.directory.appendingPathComponent("a"))
        let (relay, port, _, group) = try await Self.relay(to: first) { $0.captureDirectory = captures.path }
        let source = try cblite.database("source", holding: mixedDocuments(60, largeEvery: 30))
        #expect(try cblite.run(["push", source, "ws://127.0.0.1:\(port)/listener"]).status == 0)
        try await relay.shutdown()
        first.stop()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: captures.path).first { $0.hasSuffix(".blipcap") })
        let script = try CapturedSession.load(path: captures.appendingPathComponent(file).path, session: nil).script(for: .client)
        let fresh = try LiteCorePeer(name: "listener", in: cblite.directory.appendingPathComponent("b"))
        defer { fresh.stop() }
        let report = try await ReplayClient.run(script, target: "ws://127.0.0.1:\(fresh.port)/listener",
                                                configuration: ReplayConfiguration(), group: group)
        #expect(report.endedEarly == nil, "\(report.endedEarly ?? "")")
        #expect(report.requestsSent == report.requestsScripted)
        try await group.shutdownGracefully()
    }
}

/// Deletions, a blob of several megabytes, a conflict and a continuous pull, LiteCore on both
/// sides of the relay.
@Suite(.serialized, .enabled(if: CBLite.available && LiteCorePeer.available,
                             "set BLIPSCOPE_CBLITE and BLIPSCOPE_LITECORE_PEER"))
struct LiteCoreListenerScenarioTests {
    @Test func deletionsABlobAConflictAndAContinuousPull() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let peer = try LiteCorePeer(name: "listener", in: cblite.directory)
        defer { peer.stop() }
        let (relay, port, events, group) = try await LiteCoreListenerTests.relay(to: peer)
        let url = "ws://127.0.0.1:\(port)/\(peer.name)"

        // A 3 MB blob: LiteCore pulls it from the embedded gateway, then pushes it to the listener.
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }
        let gateway = try await InteropHarness.start(seed: { database in
            _ = try database.put("photo", body: ["title": .string("x")],
                                 attachments: ["photo.png": Attachment(contentType: "image/png", data: blob)])
        })
        let mine = try cblite.database("mine", holding: mixedDocuments(100))
        #expect(try cblite.run(["pull", mine, gateway.url()]).status == 0)
        try await gateway.shutdown()
        for id in ["doc-0003", "doc-0004"] { _ = try cblite.run(["rm", mine, id]) }
        let pushed = try cblite.run(["push", mine, url])
        #expect(pushed.status == 0, "\(pushed.output)")

        let theirs = try cblite.database("theirs")
        let pulled = try cblite.run(["pull", theirs, url])
        #expect(pulled.status == 0, "\(pulled.output)")
        #expect(try cblite.documentIDs(theirs).count == 99, "100 documents and the photo, less two deleted")
        #expect(cblite.blobCount(theirs) == 1, "the blob came through the relay both ways")

        // The same document changed on both sides: the second push is refused as a conflict.
        _ = try cblite.run(["put", mine, "doc-0010", #"{"v":"mine"}"#])
        _ = try cblite.run(["put", theirs, "doc-0010", #"{"v":"theirs"}"#])
        #expect(try cblite.run(["push", theirs, url]).status == 0)
        let conflicted = try cblite.run(["push", mine, url])
        #expect(conflicted.output.contains("Completed 0 docs"), "\(conflicted.output)")

        // A continuous pull sees a document pushed while it runs.
        let watcher = try cblite.database("watcher")
        let follow = try cblite.start(["pull", "--continuous", watcher, url])
        let late = try cblite.database("late", holding: [["_id": "late-doc", "n": 1]])
        #expect(try cblite.run(["push", late, url]).status == 0)
        try await withDeadline(.seconds(60)) { await events.wait { $0.storedByClient.contains("late-doc") } }
        _ = try follow.stop()
        #expect(try cblite.documentIDs(watcher).contains("late-doc"))
        #expect(events.decodeErrors == 0)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }
}
