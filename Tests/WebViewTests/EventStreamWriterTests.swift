import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOConcurrencyHelpers
import Testing
@testable import WebView

/// The writer of one viewer's live feed, on an embedded channel with a hand-moved clock: full
/// batches follow each other at once only within the viewer's byte rate; past it the next waits
/// for the feed interval, so a fast session cannot make a viewer cost the relay more.
@Suite("Live feed writer")
struct EventStreamWriterTests {
    /// Holds the pipeline's context for the writer, as the responder's handler does.
    final class ContextHolder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = Never
        var context: ChannelHandlerContext?
        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    }

    @Test("full batches follow at once within the byte rate; past it the next waits for a feed interval")
    func fullBatchesStopAtTheByteRate() throws {
        let channel = EmbeddedChannel()
        let holder = ContextHolder()
        try channel.pipeline.syncOperations.addHandler(holder)
        channel.isWritable = true
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let clock = NIOLockedValueBox(100.0)
        let polls = NIOLockedValueBox(0)
        // Every poll is a full batch of about 1 KiB; the viewer may have 3 KiB a second.
        let batch = ServerSentEvent(event: "rows", data: String(repeating: "r", count: 1_000))
        let source = EventStreamWriter.Source(poll: { _ in polls.withLockedValue { $0 += 1 }; return [batch] },
                                              hasMore: { true })
        let writer = EventStreamWriter(context: try #require(holder.context), version: .http1_1,
                                       interval: .milliseconds(500), stallPolls: 2, bytesPerSecond: 3_000,
                                       source: source, now: { clock.withLockedValue { $0 } }, onEnd: {})
        writer.start(sendBufferBytes: 0)
        channel.embeddedEventLoop.run()
        #expect(polls.withLockedValue { $0 } == 3, "three full batches at once, then the rate holds the fourth")

        // Half a second later (same rate window): the interval's poll sends one, the rate holds the rest.
        clock.withLockedValue { $0 += 0.5 }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        #expect(polls.withLockedValue { $0 } == 4)

        // A new second: three more at once.
        clock.withLockedValue { $0 += 0.5 }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        #expect(polls.withLockedValue { $0 } == 7)
        _ = try? channel.finish()
    }
}
