import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

@Suite struct RelayBackPressureTests {
    /// The upstream stops reading while the client sends far more than any buffer holds: the relay
    /// must stop reading the client (a flow-control pause) and its buffer towards the upstream must
    /// stay near the high-water mark, not grow with the traffic. Then everything arrives.
    @Test func slowReaderHoldsRelayBuffersFlat() async throws {
        let received = NIOLockedValueBox(0)
        let messageCount = 320
        let allArrived = AsyncStreamBox()
        let harness = try await RelayHarness.start(upstream: { config in
            config.receiveBufferSize = 64 * 1024
            config.onRequest = { _, _ in
                let count = received.withLockedValue { $0 += 1; return $0 }
                if count == messageCount { allArrived.finish() }
            }
        })
        let client = try await harness.connected()
        let server = try await harness.upstream()
        try await server.pauseReading()
        let payload = ByteBuffer(repeating: 0x61, count: 100_000)
        for _ in 0..<messageCount {
            _ = try await client.send(.request(profile: "rev", body: payload, noReply: true))
        }
        _ = try await harness.recorder.first {
            if case .flowControl(_, .clientToServer, true) = $0 { true } else { false }
        }
        let during = try #require(await harness.relay.statistics().first)
        let limits = harness.relay.configuration.limits
        let bound = limits.writeBufferHighWater + 64 * 1024 + limits.maxWebSocketFrameSize
        #expect(during.maxBufferedBytes[0] <= bound)
        // Sampled after each read batch's flush while the hop is unwritable: NIO keeps it so until
        // the backlog drops under the low-water mark, so the sample is at least that.
        #expect(during.maxBufferedBytes[0] >= limits.writeBufferLowWater)
        #expect(during.bytesForwarded[0] < messageCount * 100_000)
        try await server.resumeReading()
        try await withTimeout(60) { await allArrived.wait() }
        let after = try #require(await harness.relay.statistics().first)
        #expect(after.maxBufferedBytes[0] <= bound)
        #expect(after.flowPauses[0] >= 1)
        try await client.close()
        try await harness.shutdown()
    }
}

/// A one-shot signal usable from any thread.
final class AsyncStreamBox: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }
    func finish() { continuation.finish() }
    func wait() async { for await _ in stream {} }
}
