import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// A sender whose frames reach the relay in pieces (a small send buffer: the kernel lets out a
/// few KiB of each 16 KiB frame at a time, as Sync Gateway's writes of large revs arrive) while
/// its receiver says nothing: every read that ends inside a frame is acknowledged at once, and
/// the message arrives whole. Without the immediate acknowledgement each such piece waited for
/// the relay kernel's delayed ACK (docs/sync-gateway-behaviour.md, "Large revs").
@Suite struct RelayMidFrameAckTests {
    @Test func piecesOfFramesAreAcknowledgedAtOnceAndArriveWhole() async throws {
        let received = NIOLockedValueBox<ByteBuffer?>(nil)
        let arrived = AsyncStreamBox()
        let harness = try await RelayHarness.start(upstream: { config in
            config.onRequest = { message, _ in
                received.withLockedValue { $0 = message.body }
                arrived.finish()
            }
        })
        let outcome = try await harness.connect { $0.sendBufferSize = 4096 }
        let client = try #require(outcome.connection)
        var random = SeededRandom(seed: 40)
        var payload = ByteBuffer()
        for _ in 0..<(2 * 1024 * 1024) { payload.writeInteger(UInt8.random(in: 0...255, using: &random)) }
        _ = try await client.send(.request(profile: "rev", body: payload, noReply: true))
        try await withTimeout(120) { await arrived.wait() }

        #expect(received.withLockedValue { $0 } == payload)
        let statistics = try #require(await harness.relay.statistics().first)
        #expect(statistics.immediateAcks[BLIPDirection.clientToServer.rawValue] > 0)
        try await client.close()
        try await harness.shutdown()
    }
}
