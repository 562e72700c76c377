import BLIPTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Replay
import Testing

/// `blipscope replay` as a user runs it: the built executable in the client role against a
/// server-role replay of the go-blip capture running in the test, and its exit statuses.
@Suite struct ReplayCommandTests {
    static func fixture() throws -> String {
        try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
    }

    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await BlipscopeExecutable.run(arguments)
        return (result.status, result.output)
    }

    @Test("client role against a replayed go-blip server: exit 0 and a JSON report that matches")
    func matchingReplayExitsZero() async throws {
        let fixture = try Self.fixture()
        let script = try CapturedSession.load(path: fixture, session: nil).script(for: .server)
        try await withLoopback { group in
            let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
            let (status, output) = try await Self.run(["replay", fixture, "--target", "ws://127.0.0.1:\(server.port)/db",
                                                       "--json", "--timeout", "60"])
            await server.stop()
            #expect(status == 0)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            #expect(json["matches"] as? Bool == true)
            let report = try #require(json["report"] as? [String: Any])
            #expect(report["requestsSent"] as? Int == 17)
            #expect((report["entries"] as? [Any])?.count == 17)
        }
    }

    @Test("a changed reply: exit 1, a DIFFERS line with the path, and --allow turns it into 0")
    func differingReplyExitsOne() async throws {
        let fixture = try Self.fixture()
        var script = try CapturedSession.load(path: fixture, session: nil).script(for: .server)
        let index = try #require(script.peerRequests.firstIndex { $0.profile == "getCheckpoint" })
        var reply = try #require(script.peerRequests[index].recordedReply)
        reply.properties["rev"] = "9-replayed"
        script.peerRequests[index].recordedReply = reply
        let modified = script
        try await withLoopback { group in
            let server = try await ReplayServer.start(modified, configuration: ReplayConfiguration(), group: group)
            let target = "ws://127.0.0.1:\(server.port)/db"
            let strict = try await Self.run(["replay", fixture, "--target", target, "--strict"])
            let allowed = try await Self.run(["replay", fixture, "--target", target])
            await server.stop()
            #expect(strict.status == 1)
            #expect(strict.output.contains("getCheckpoint"))
            #expect(strict.output.contains("[DIFFERS]"))
            #expect(strict.output.contains("properties.rev:"))
            #expect(strict.output.split(separator: "\n").last?.hasPrefix("DIFFERENT:") == true)
            // checkpoint-rev is allowed by default.
            #expect(allowed.status == 0)
            #expect(allowed.output.contains("(allowed: checkpoint-rev)"))
        }
    }

    @Test("usage and connection errors: exit 2")
    func errorsExitTwo() async throws {
        let fixture = try Self.fixture()
        #expect(try await Self.run(["replay", fixture]).status == 2)
        #expect(try await Self.run(["replay", fixture, "--target", "ws://127.0.0.1:1/db", "--serve", "127.0.0.1:0"]).status == 2)
        #expect(try await Self.run(["replay", fixture, "--target", "ws://127.0.0.1:1/db", "--timing", "soon"]).status == 2)
        #expect(try await Self.run(["replay", fixture, "--target", "ws://127.0.0.1:1/db", "--allow", "whatever"]).status == 2)
        #expect(try await Self.run(["replay", "/nonexistent.pcap", "--target", "ws://127.0.0.1:1/db"]).status == 2)
        // Nothing listens on a reserved port: the connection is refused.
        let closed = try ClosedPort()
        #expect(try await Self.run(["replay", fixture, "--target", "ws://127.0.0.1:\(closed.port)/db"]).status == 2)
        withExtendedLifetime(closed) {}
    }

    @Test("--serve: a pull recorded through the built relay is served again to the built replicator, which gets the same documents")
    func servedReplayOfARecordedPull() async throws {
        let directory = NSTemporaryDirectory() + "blipscope-replay-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Record: gateway ← relay --capture ← replicate --pull.
        let (gateway, gatewayPort) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath])
        defer { gateway.kill() }
        let (relay, relayPort) = try await BlipscopeExecutable.startRelay(["--upstream", "ws://127.0.0.1:\(gatewayPort)",
                                                                          "--capture", directory])
        defer { relay.kill() }
        let recorded = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(relayPort)/db")
        #expect(recorded.status == 0, "\(recorded.errors)")
        let documents = try #require(recorded.result?["pulledRevisions"] as? Int)
        #expect(documents > 0)
        #expect(try await relay.stop() == 0)  // closes and flushes the capture file
        #expect(try await gateway.stop() == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(files.count == 1)
        let capture = "\(directory)/\(try #require(files.first))"

        // Replay: the recorded gateway, with no gateway running, serves a new pull.
        let replay = try BlipscopeExecutable.start(["replay", capture, "--serve", "127.0.0.1:0", "--timeout", "60"])
        defer { replay.kill() }
        let port = try await replay.announcedPort(after: "replaying the server side of session")
        let replayed = try await BlipscopeExecutable.replicate("ws://127.0.0.1:\(port)/db")
        #expect(replayed.status == 0, "\(replayed.errors)")
        #expect(replayed.result?["pulledRevisions"] as? Int == documents)
        #expect(replayed.result?["pulledAttachments"] as? Int == recorded.result?["pulledAttachments"] as? Int)
        #expect(replayed.result?["localDocuments"] as? Int == documents)
        // One client served, the replay reports and ends: it matched.
        #expect(try await replay.waitForExit(within: 30) == 0, "\(replay.output.text)")
        let last = try #require(replay.output.lines.last)
        #expect(last.hasPrefix("MATCH: server role"), "\(last)")
        #expect(last.contains(", 0 replies differ"), "\(last)")
    }
}
