import BLIPCore
import BLIPTestSupport
import Foundation
import NIOPosix
import Policy
import Relay
import Replay
import Testing

/// go-blip on both ends (the library Sync Gateway speaks BLIP with): a go-blip client and a go-blip
/// echo server with the relay between them. go-blip checks every frame's CRC and inflates with
/// its own (Go's) deflate reader, so a wrong number, checksum or deflate byte from the relay
/// fails the client's session. Opt-in: `BLIPSCOPE_GOBLIP_PEER`.
@Suite(.serialized, .enabled(if: GoBlipPeer.available, "set BLIPSCOPE_GOBLIP_PEER to a goblip-peer binary"))
struct GoBlipThroughRelayTests {
    /// A relay (configured by `configure`) in front of a go-blip echo server.
    private struct Harness {
        let group: MultiThreadedEventLoopGroup
        let relay: RelayServer
        let events: EventCounter
        let url: String
        let server: RunningCommand

        func shutdown() async throws {
            try await relay.shutdown()
            server.kill()
            try await group.shutdownGracefully()
        }
    }

    private func harness(serverSubprotocol: String? = nil,
                         _ configure: (inout RelayConfiguration) throws -> Void = { _ in }) async throws -> Harness {
        let (server, port) = try await GoBlipPeer.serve(subprotocol: serverSubprotocol)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: port)))
        configuration.listenPort = 0
        try configure(&configuration)
        let (relay, relayPort, events) = try await InteropHarness.startRelay(configuration, group: group)
        return Harness(group: group, relay: relay, events: events, url: "ws://127.0.0.1:\(relayPort)/db/_blipsync",
                       server: server)
    }

    /// Every session the relay saw ended with go-blip's normal close, every message decoded.
    private func expectCleanSessions(_ harness: Harness, count: Int, messagesEachWay: [Int]) {
        let summaries = harness.events.summaries
        #expect(summaries.count == count)
        #expect(harness.events.decodeErrors == 0)
        for (summary, messages) in zip(summaries.sorted { $0.statistics.sessionID < $1.statistics.sessionID }, messagesEachWay) {
            #expect(summary.relayError == nil, "\(String(describing: summary.relayError))")
            #expect(summary.statistics.decodeErrors == [0, 0])
            #expect(summary.statistics.messagesDecoded == [messages, messages])
            #expect(summary.clientClose?.code == 1000)
        }
    }

    @Test("Small and 1 MiB echoes, compressed and not, pass through unchanged and every message is decoded both ways")
    func passThrough() async throws {
        let harness = try await harness()
        let runs: [(count: Int, size: Int, compress: Bool, inFlight: Int)] = [
            (2_000, 300, false, 8), (2_000, 300, true, 8),
            (20, 1 << 20, true, 4), (20, 1 << 20, false, 4),  // uncompressed: go-blip's ACK flow control
            (200, 100_000, true, 8),
        ]
        for run in runs {
            let report = try await GoBlipPeer.load(harness.url, count: run.count, size: run.size, compress: run.compress,
                                                   inFlight: run.inFlight)
            #expect(report.sent == run.count && report.ok == run.count, "\(run): \(report)")
        }
        await harness.events.wait { $0.summaries.count == runs.count }
        expectCleanSessions(harness, count: runs.count, messagesEachWay: runs.map(\.count))
        try await harness.shutdown()
    }

    @Test("relay --no-decode: small and 1 MiB echoes, compressed and not, pass through unchanged, none decoded, every frame counted")
    func notDecoding() async throws {
        let harness = try await harness { $0.decodes = false }
        let runs: [(count: Int, size: Int, compress: Bool, inFlight: Int)] = [
            (2_000, 300, false, 8), (2_000, 300, true, 8), (20, 1 << 20, true, 4), (20, 1 << 20, false, 4),
        ]
        for run in runs {
            let report = try await GoBlipPeer.load(harness.url, count: run.count, size: run.size, compress: run.compress,
                                                   inFlight: run.inFlight)
            #expect(report.sent == run.count && report.ok == run.count, "\(run): \(report)")
        }
        await harness.events.wait { $0.summaries.count == runs.count }
        for summary in harness.events.summaries {
            #expect(summary.relayError == nil && summary.clientClose?.code == 1000)
            #expect(summary.statistics.messagesDecoded == [0, 0])
            #expect(summary.statistics.framesForwarded[0] > 0 && summary.statistics.framesForwarded[1] > 0)
        }
        try await harness.shutdown()
    }

    /// A policy denies every request whose `seq` ends in 7: the relay answers those with ERR and
    /// renumbers the rest to the server, re-deflating later compressed frames; go-blip's client
    /// gets an ERR for each denied request and every other reply intact. The relay reads no echo's
    /// body, so it holds none: four 1 MiB echoes in flight each way stay far inside a 256 kB bound
    /// on what its mediating sessions may hold.
    @Test("A mediating relay that denies one request in ten: go-blip gets ERRs for those and every other echo intact")
    func mediatedDenials() async throws {
        let harness = try await harness { configuration in
            configuration.limits.maxRelayBytesInProgress = 256 * 1024
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: """
                rules:
                  - name: every-tenth
                    match: { from: client, type: request, profile: echo, properties: { seq: "*7" } }
                    action: { deny: { code: 403, message: "withheld" } }
                """))
        }
        let runs: [(count: Int, size: Int, compress: Bool, inFlight: Int)] = [
            (1_000, 300, false, 8), (1_000, 300, true, 8), (30, 1 << 20, true, 4), (200, 40_000, true, 8),
        ]
        for run in runs {
            let report = try await GoBlipPeer.load(harness.url, count: run.count, size: run.size, compress: run.compress,
                                                   inFlight: run.inFlight)
            let denied = run.count / 10
            #expect(report.sent == run.count && report.mismatched == 0, "\(run): \(report)")
            #expect(report.ok == run.count - denied && report.errors == denied, "\(run): \(report)")
        }
        await harness.events.wait { $0.summaries.count == runs.count }
        #expect(harness.events.verdicts.count == runs.map { $0.count / 10 }.reduce(0, +))
        #expect(harness.events.decodeErrors == 0)
        #expect(harness.events.summaries.allSatisfy { $0.relayError == nil && $0.clientClose?.code == 1000 })
        try await harness.shutdown()
    }

    /// go-blip offers one sub-protocol per handshake. The server speaks only CBMobile_3 and refuses
    /// CBMobile_2 with HTTP 500 ("I only speak …"); the relay passes the refusal on, go-blip tries
    /// again with CBMobile_3 and that session runs.
    @Test("go-blip's second handshake, after the server refused its first sub-protocol through the relay, gets a working session")
    func subprotocolFallback() async throws {
        let harness = try await harness(serverSubprotocol: "BLIP_3+CBMobile_3")
        let report = try await GoBlipPeer.load(harness.url, count: 100, size: 300, compress: true, inFlight: 4,
                                               subprotocols: ["BLIP_3+CBMobile_2", "BLIP_3+CBMobile_3"])
        #expect(report.ok == 100, "\(report)")
        await harness.events.wait { $0.summaries.count == 1 }
        let summary = try #require(harness.events.summaries.first)
        #expect(summary.info.subprotocol == "BLIP_3+CBMobile_3")
        #expect(summary.statistics.messagesDecoded == [100, 100])
        // The first handshake was refused by the server, and the relay passed its 500 on.
        let refusals = harness.events.refusals
        #expect(refusals.count == 1)
        #expect(refusals.first?.status == .internalServerError)
        #expect(harness.events.summaries.count == 1, "the refused handshake made no session")
        try await harness.shutdown()
    }

    /// `bench relay --goblip` through real sockets: go-blip's load and echo server on each path,
    /// relay and nginx-free, at a small scale.
    @Test("bench relay --goblip drives go-blip's peers directly and through the relay and reports every workload")
    func benchWithGoBlipPeers() async throws {
        let finished = try await BlipscopeExecutable.runBench(
            ["relay", "--goblip", GoBlipPeer.path!, "--placement", "free", "--rounds", "1", "--scale", "0.05",
             "--only", "ABCD"], within: 300)
        #expect(finished.status == 0, "\(finished.errors)")
        let lines = finished.output.split(separator: "\n")
        // The report names its machine first, then its peers.
        #expect(lines.first?.hasPrefix("machine: ") == true)
        #expect(lines.dropFirst().first?.hasPrefix("relay bench: go-blip peers") == true, "\(finished.output)")
        for letter in ["A ", "B ", "C "] {
            let line = try #require(lines.first { $0.hasPrefix(letter) }, "\(finished.output)")
            // direct msg/s, relay msg/s, ratio, MB/s, CPU: all numbers, the rates above zero.
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            #expect(numbers.count >= 5 && numbers[0] > 0 && numbers[1] > 0, "\(line)")
        }
        #expect(lines.contains { $0.hasPrefix("D  (free)") && $0.contains("relay p50") })
    }

    /// A compressed go-blip session captured by the relay, then its server side replayed to a new
    /// go-blip client sending the same requests: every reply arrives intact.
    @Test("A captured compressed go-blip session replayed to a new go-blip client gives it every echo intact")
    func captureAndReplay() async throws {
        let captures = FileManager.default.temporaryDirectory.appendingPathComponent("goblip-capture-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: captures) }
        let harness = try await harness { $0.captureDirectory = captures.path }
        let first = try await GoBlipPeer.load(harness.url, count: 300, size: 20_000, compress: true, inFlight: 1)
        #expect(first.ok == 300, "\(first)")
        await harness.events.wait { $0.summaries.count == 1 }
        try await harness.shutdown()  // the capture is complete once the relay has shut down
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: captures.path).first { $0.hasSuffix(".blipcap") })
        let script = try CapturedSession.load(path: captures.appendingPathComponent(file).path, session: nil).script(for: .server)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
        let replayed = try await GoBlipPeer.load("ws://127.0.0.1:\(server.port)/db/_blipsync", count: 300, size: 20_000,
                                                 compress: true, inFlight: 1)
        await server.stop()
        try await group.shutdownGracefully()
        #expect(replayed.sent == 300 && replayed.ok == 300, "\(replayed)")
    }
}
