import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOConcurrencyHelpers
import Testing
@testable import WebView

/// The writer of one viewer's live feed, on an embedded channel with a hand-moved clock: every
/// byte is paid from a bucket of one second's bytes, so however fast the session, a viewer costs
/// the relay at most its byte rate.
@Suite("Live feed writer")
struct EventStreamWriterTests {
    /// Holds the pipeline's context for the writer, as the responder's handler does.
    final class ContextHolder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = Never
        var context: ChannelHandlerContext?
        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    }

    /// A writer on an embedded channel whose feed always has a full batch of `rowBytes` waiting,
    /// with the clock moved by hand; returns the poll budgets seen and the bytes written so far.
    final class Rig: @unchecked Sendable {
        let channel = EmbeddedChannel()
        let clock = NIOLockedValueBox(100.0)
        let budgets = NIOLockedValueBox<[Int]>([])
        let writer: EventStreamWriter

        init(bytesPerSecond: Int, rowBytes: Int) throws {
            let holder = ContextHolder()
            try channel.pipeline.syncOperations.addHandler(holder)
            channel.isWritable = true
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            let batch = ServerSentEvent(event: "rows", data: String(repeating: "r", count: rowBytes))
            let budgets = budgets
            let clock = clock
            let source = EventStreamWriter.Source(poll: { _, budget in budgets.withLockedValue { $0.append(budget) }; return [batch] },
                                                  hasMore: { true })
            writer = EventStreamWriter(context: try #require(holder.context), version: .http1_1,
                                       interval: .milliseconds(500), stallPolls: 2, bytesPerSecond: bytesPerSecond,
                                       source: source, now: { clock.withLockedValue { $0 } }, onEnd: {})
            writer.start(sendBufferBytes: 0)
            channel.embeddedEventLoop.run()
        }

        var polls: Int { budgets.withLockedValue { $0.count } }

        /// Body bytes written so far (the head is not counted).
        func bodyBytes() throws -> Int {
            var total = 0
            while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
                if case .body(.byteBuffer(let buffer)) = part { total += buffer.readableBytes }
            }
            return total
        }

        func advance(seconds: Double) {
            clock.withLockedValue { $0 += seconds }
            channel.embeddedEventLoop.advanceTime(by: .nanoseconds(Int64(seconds * 1e9)))
        }
    }

    @Test("full batches follow at once while the bucket has bytes; then the next waits for a feed interval")
    func fullBatchesStopWhenTheBucketIsEmpty() throws {
        // Every poll is a full batch of about 1 KiB; the viewer may have 3 KB a second.
        let rig = try Rig(bytesPerSecond: 3_000, rowBytes: 1_000)
        #expect(rig.polls == 3, "three full batches at once (one second's bytes), then the bucket is empty")
        #expect(rig.budgets.withLockedValue { $0 } == [3_000, 1_980, 960], "each poll may take only what is left")

        // Half a second refills 1,500 bytes: the interval's poll sends one and a second at once.
        rig.advance(seconds: 0.5)
        #expect(rig.polls == 5)
        _ = try? rig.channel.finish()
    }

    @Test("a viewer that always has more to take gets the byte rate on average, never more")
    func theByteRateHoldsOverTime() throws {
        let rate = 3_000
        let rig = try Rig(bytesPerSecond: rate, rowBytes: 1_000)
        var sent = try rig.bodyBytes()
        for _ in 0..<40 { rig.advance(seconds: 0.5); sent += try rig.bodyBytes() }
        // 20 seconds: the rate for each, the first second's bucket, and at most one row over.
        #expect(sent <= 20 * rate + rate + 1_020)
        #expect(sent >= 20 * rate - 1_020, "and the viewer is not starved either")
        #expect(rig.budgets.withLockedValue { $0 }.allSatisfy { $0 >= 1 && $0 <= rate })
        _ = try? rig.channel.finish()
    }
}
