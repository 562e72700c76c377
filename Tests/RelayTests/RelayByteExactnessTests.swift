import BLIPCore
import BLIPNIO
import NIOCore
import NIOPosix
import Testing
@testable import Relay

/// Pass-through fidelity: with taps on both legs, the WebSocket bytes the relay sends upstream
/// are exactly the bytes the client sent (masks included), and the bytes the client receives are
/// exactly what the upstream sent.
@Suite struct RelayByteExactnessTests {
    @Test func everyForwardedByteIsTheSame() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstreamTap = try await TCPTap.start(group: group)
        let harness = try await RelayHarness.start(relay: { configuration in
            upstreamTap.interpose(upstreamOf: &configuration)
        })
        let clientTap = try await TCPTap.start(group: group, targetPort: harness.relayAddress.port!)
        let outcome = try await harness.connect { $0.port = clientTap.port }
        let client = try #require(outcome.connection)

        let bulk = String(repeating: "{\"_id\":\"doc\",\"n\":12345},", count: 12_000)   // ~290 kB: many frames, ACKs
        for compressed in [false, true] {
            _ = try await withTimeout { try await client.request(.request(profile: "echo", body: body("small"), compressed: compressed)) }
            _ = try await withTimeout { try await client.request(.request(profile: "bulk", body: body(bulk), compressed: compressed)) }
            _ = try await withTimeout { try await client.request(.request(profile: "note", body: body("n"), urgent: true, noReply: true)) }
        }
        let server = try await harness.upstream()
        _ = try await withTimeout { try await server.request(.request(profile: "changes", body: body("[]"), compressed: true)) }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        // Wait until both legs are closed, so the taps have seen every byte.
        try await withTimeout { try await clientTap.closed.get() }
        try await withTimeout { try await upstreamTap.closed.get() }

        let clientSent = TCPTap.webSocketBytes(clientTap.forward.withLockedValue { $0 })
        let upstreamGot = TCPTap.webSocketBytes(upstreamTap.forward.withLockedValue { $0 })
        let upstreamSent = TCPTap.webSocketBytes(upstreamTap.backward.withLockedValue { $0 })
        let clientGot = TCPTap.webSocketBytes(clientTap.backward.withLockedValue { $0 })
        // Both directions carried the bulk bodies (requests one way, echoed replies the other):
        // equal streams are no proof if a tap saw nothing.
        #expect(clientSent.count > 250_000)
        #expect(upstreamSent.count > 250_000)
        #expect(Self.firstDifference(clientSent, upstreamGot) == nil, "client → upstream is byte-exact")
        #expect(Self.firstDifference(upstreamSent, clientGot) == nil, "upstream → client is byte-exact")

        try await harness.shutdown()
        try await clientTap.close()
        try await upstreamTap.close()
        try await group.shutdownGracefully()
    }

    /// Where two byte streams first differ, with the lengths and a few bytes of context; nil when equal.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String? {
        guard a != b else { return nil }
        let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        func around(_ bytes: [UInt8]) -> [UInt8] { Array(bytes[max(0, index - 4)..<min(bytes.count, index + 12)]) }
        return "lengths \(a.count) / \(b.count), first difference at \(index): \(around(a)) vs \(around(b))"
    }
}
