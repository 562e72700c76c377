import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import Relay

/// `blipscope relay` drained by a real SIGTERM: /readyz fails at once, the live session gets
/// `--drain-timeout`, then 1001; the capture is complete; a second SIGTERM stops at once.
@Suite("relay command: drain on SIGTERM")
struct RelayDrainCommandTests {
    struct Running {
        let relay: RunningCommand
        let port: Int
        let adminPort: Int
        let group: MultiThreadedEventLoopGroup
        let upstream: BLIPWebSocketServer

        static func start(_ arguments: [String]) async throws -> Running {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let upstream = try await RelayHarness.echoUpstream(group: group)
            let (relay, port) = try await BlipscopeExecutable.startRelay(
                // No health checks: the test's echo peer is no Sync Gateway (its `GET /` is a
                // refused handshake); `/readyz` then asks the node for a TCP connection.
                ["--upstream", "ws://127.0.0.1:\(upstream.localAddress.port!)", "--admin", "127.0.0.1:0",
                 "--upstream-check-interval", "0"] + arguments)
            do {
                let adminPort = try await relay.announcedPort(after: "admin listener at ")
                return Running(relay: relay, port: port, adminPort: adminPort, group: group, upstream: upstream)
            } catch {
                relay.kill()
                throw error
            }
        }

        func client() async throws -> BLIPConnection { try await RelayHarness.client(to: port, group: group) }

        func readyz() async throws -> (status: Int, body: String) {
            try await httpGet(port: adminPort, path: "/readyz", group: group)
        }

        func stop() async throws {
            relay.kill()
            try? await upstream.close()
            try await group.shutdownGracefully()
        }
    }

    @Test("SIGTERM: the live session closed with 1001 after --drain-timeout, its capture complete, each phase logged, exit 0")
    func drainOnSigterm() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let running = try await Running.start(["--drain-timeout", "1", "--capture", directory])
        #expect(try await running.readyz().status == 200)
        let client = try await running.client()
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("before"))) }
        #expect(String(buffer: reply.body) == "before")
        running.relay.signal(SIGTERM)
        #expect(try await withTimeout { try await client.closed.get() }.code == 1001)
        #expect(try await running.relay.waitForExit() == 0)
        let log = running.relay.output.text
        for phase in ["event=drain phase=started sessions=1 timeoutMs=1000", "event=drain phase=listener-closed",
                      "event=drain phase=timed-out sessions=1", "event=drain phase=done"] {
            #expect(log.contains(phase), "\(phase) in \(log)")
        }
        let records = try RelayCaptureTests.files(in: directory).flatMap { try RelayCaptureTests.records($0) }
        #expect(try RelayCaptureTests.decodedRequests(records)[.clientToServer] == ["before"])
        let closes = records.compactMap { if case .close(let close) = $0 { close.code } else { nil } }
        #expect(closes == [1001, 1001, 1001], "the capture ends with the closes")
        try await running.stop()
    }

    @Test("SIGTERM: /readyz answers 503 at once; a second SIGTERM during the drain stops at once: the session closed with 1001, exit 0")
    func secondSigterm() async throws {
        let running = try await Running.start(["--drain-timeout", "600"])
        #expect(try await running.readyz().status == 200)
        let client = try await running.client()
        running.relay.signal(SIGTERM)
        try await running.relay.waitForOutput { $0.contains("event=drain phase=listener-closed") }
        // The drain waits for the second signal: the admin listener answers all along.
        let ready = try await running.readyz()
        #expect(ready.status == 503 && ready.body.contains("draining"), "\(ready)")
        running.relay.signal(SIGTERM)
        #expect(try await withTimeout { try await client.closed.get() }.code == 1001)
        #expect(try await running.relay.waitForExit(within: 60) == 0, "long before the 600 s drain timeout")
        #expect(running.relay.output.text.contains("event=drain phase=stopped sessions=1"), "\(running.relay.output.text)")
        try await running.stop()
    }

    @Test("Ctrl-C (SIGINT) stops at once, whatever --drain-timeout says: the session closed with 1001")
    func interruptStopsAtOnce() async throws {
        let running = try await Running.start(["--drain-timeout", "600"])
        let client = try await running.client()
        running.relay.signal(SIGINT)
        #expect(try await withTimeout { try await client.closed.get() }.code == 1001)
        #expect(try await running.relay.waitForExit(within: 60) == 0)
        #expect(running.relay.output.text.contains("event=drain phase=stopped sessions=1"), "\(running.relay.output.text)")
        try await running.stop()
    }
}
