import BLIPCore
import BLIPNIO
import Capture
import Foundation
import NIOCore
import Testing
@testable import Relay

/// Draining through real sockets, by the entry point the SIGTERM handler calls
/// (``RelayServer/drain(timeout:)``); the signal itself is tested through the executable
/// (``RelayDrainCommandTests``).
@Suite("Relay: drain")
struct RelayDrainTests {
    @Test("while draining /readyz is 503 and no new session starts; stopped (a second SIGTERM), the live one closes with 1001 on both sides")
    func liveSessionClosedAt1001() async throws {
        let fixture = try await MetricsFixture.start()
        let harness = fixture.harness
        #expect(try await fixture.get("/readyz") == (200, "ok\n"))
        let client = try await harness.connected()
        let server = try await harness.upstream()
        // Long enough for /readyz to be asked during it; ended early by stopDraining() below.
        let drain = Task { await harness.relay.drain(timeout: .seconds(120)) }
        _ = try await withTimeout { while !harness.relay.isDraining { await Task.yield() } }
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.body.contains("draining"), "\(ready.body)")
        // Refused at the TCP connect (the listener is closed), or, had it been queued, with 503.
        let refused = try? await harness.connect()
        #expect(refused?.connection == nil, "no new session while draining")
        #expect(harness.relay.sessionCount == 1, "the live session still runs")
        harness.relay.stopDraining()
        let clientSaw = try await withTimeout { try await client.closed.get() }
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(clientSaw.code == 1001)
        #expect(upstreamSaw.code == 1001)
        try await withTimeout { await drain.value }
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "shutting_down")
        try await fixture.admin.shutdown()
        try? await harness.upstream.close()
        try await harness.group.shutdownGracefully()
    }

    @Test("the drain timeout: a session still open when it passes is closed with 1001")
    func timeoutCloses() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        let server = try await harness.upstream()
        try await withTimeout { await harness.relay.drain(timeout: .milliseconds(200)) }
        #expect(try await withTimeout { try await client.closed.get() }.code == 1001)
        #expect(try await withTimeout { try await server.closed.get() }.code == 1001)
        #expect(harness.relay.localAddress == nil, "the listener is closed")
        let phases = harness.recorder.all.compactMap { if case .drain(let phase) = $0 { phase } else { nil } }
        #expect(phases == [.started(liveSessions: 1, timeout: .milliseconds(200)), .listenerClosed, .timedOut(openSessions: 1), .done])
        let line = LogLine(format: .text, redactBodies: false, withBody: false).drain(phases[0]).finish()
        #expect(line.contains("event=drain phase=started sessions=1 timeoutMs=200"), "\(line)")
        try? await harness.upstream.close()
        try await harness.group.shutdownGracefully()
    }

    @Test("a session that ends by itself during the drain is not cut: its own close codes, and the drain returns then")
    func sessionEndsByItself() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        let drain = Task { await harness.relay.drain(timeout: .seconds(600)) }
        _ = try await withTimeout { while !harness.relay.isDraining { await Task.yield() } }
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("still served"))) }
        #expect(String(buffer: reply.body) == "still served")
        try await client.close(code: 1000, reason: "done")
        try await withTimeout { await drain.value }  // long before the 600 s: it ended with the session
        #expect(harness.recorder.all.contains { if case .drain(.allEnded) = $0 { true } else { false } })
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.clientClose?.code == 1000)
        #expect(summary.relayError == nil, "the relay did not end it")
        try? await harness.upstream.close()
        try await harness.group.shutdownGracefully()
    }

    @Test("after a drain the capture file is complete: every message, the 1001 closes, and it reads to its end")
    func captureComplete() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try await RelayHarness.start(relay: { $0.captureDirectory = directory })
        let client = try await harness.connected()
        let sent = try await RelayCaptureTests.traffic(client)
        try await withTimeout { await harness.relay.drain(timeout: .milliseconds(100)) }
        _ = try await withTimeout { try await client.closed.get() }
        let records = try RelayCaptureTests.files(in: directory).flatMap { try RelayCaptureTests.records($0) }
        let requests = try RelayCaptureTests.decodedRequests(records)
        #expect(requests[.clientToServer] == sent, "every request captured")
        let closes = records.compactMap { if case .close(let close) = $0 { close } else { nil } }
        #expect(closes.map(\.side) == [.client, .upstream, .relay], "\(closes)")
        #expect(closes.allSatisfy { $0.code == 1001 }, "\(closes)")
        try? await harness.upstream.close()
        try await harness.group.shutdownGracefully()
    }
}
