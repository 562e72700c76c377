import BLIPCore
import BLIPNIO
import NIOCore
import NIOWebSocket
import Testing
@testable import Relay

@Suite struct RelayCloseTests {
    @Test func clientCloseReachesUpstreamWithCodeAndReason() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "hi")) }
        let server = try await harness.upstream()
        try await client.close(code: 4002, reason: "unauthorized action")
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(upstreamSaw.code == 4002)
        #expect(upstreamSaw.reason == "unauthorized action")
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.clientClose?.code == 4002)
        #expect(summary.upstreamClose?.code == 4002)
        try await harness.shutdown()
    }

    @Test func upstreamCloseReachesClient() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "hi")) }
        let server = try await harness.upstream()
        try await server.close(code: 1000, reason: "bye")
        let clientSaw = try await withTimeout { try await client.closed.get() }
        #expect(clientSaw.code == 1000)
        #expect(clientSaw.reason == "bye")
        try await harness.shutdown()
    }

    @Test func upstreamDisappearingDropsClient() async throws {
        let harness = try await RelayHarness.start()
        let client = try await harness.connected()
        _ = try await withTimeout { try await client.request(.request(profile: "hi")) }
        let server = try await harness.upstream()
        try await server.channel.close()  // TCP drop, no CLOSE frame
        let clientSaw = try await withTimeout { try await client.closed.get() }
        #expect(clientSaw.abrupt)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.upstreamClose?.abrupt == true)
        try await harness.shutdown()
    }

    @Test func strictModeClosesOnDecodeError() async throws {
        let harness = try await RelayHarness.start(relay: { $0.strict = true })
        let client = try await harness.connected()
        // A raw binary WebSocket message that is not a BLIP frame (too short for a header).
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(bytes: [0x01]))
        try await client.channel.writeAndFlush(frame)
        let server = try await harness.upstream()
        let clientSaw = try await withTimeout { try await client.closed.get() }
        #expect(clientSaw.code == 1011)
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(upstreamSaw.code == 1011, "the relay's own CLOSE reaches the upstream too, not a bare TCP drop")
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "decode_failed")
        try await harness.shutdown()
    }
}
