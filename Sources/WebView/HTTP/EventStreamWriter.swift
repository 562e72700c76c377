import NIOCore
import NIOHTTP1

/// Sends one viewer's live feed as Server-Sent Events: every `interval` it polls the feed, but
/// only while the connection can take more (`isWritable`): a viewer that does not read is not
/// polled, falls behind, and its feed then skips ahead with a `missed` event (``MessageFeed``).
/// What waits in the connection is so at most one poll's worth. Ends when the connection closes.
final class EventStreamWriter: @unchecked Sendable {
    private let context: ChannelHandlerContext
    private let version: HTTPVersion
    private let interval: TimeAmount
    private let poll: (Double) -> [ServerSentEvent]
    private let now: @Sendable () -> Double
    private let onEnd: @Sendable () -> Void
    private var task: RepeatedTask?
    private var idlePolls = 0

    /// Polls without anything to send before a keep-alive comment.
    static let keepAliveAfter = 40

    init(context: ChannelHandlerContext, version: HTTPVersion, interval: TimeAmount,
         poll: @escaping (Double) -> [ServerSentEvent], now: @escaping @Sendable () -> Double,
         onEnd: @escaping @Sendable () -> Void) {
        self.context = context
        self.version = version
        self.interval = interval
        self.poll = poll
        self.now = now
        self.onEnd = onEnd
    }

    /// Writes the head and the first events; called on the connection's event loop.
    func start() {
        let headers = HTTPHeaders([("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                   ("X-Accel-Buffering", "no")])
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers))),
                      promise: nil)
        tick()
        task = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [self] _ in tick() }
        context.channel.closeFuture.whenComplete { [self] _ in
            task?.cancel()
            task = nil
            onEnd()
        }
    }

    private func tick() {
        let channel = context.channel
        guard channel.isActive else { return }
        guard channel.isWritable else { return }
        let events = poll(now())
        var text = ""
        if events.isEmpty {
            idlePolls += 1
            guard idlePolls >= Self.keepAliveAfter else { return }
            text = ServerSentEvent.keepAlive
        } else {
            for event in events { text += event.text }
        }
        idlePolls = 0
        let buffer = channel.allocator.buffer(string: text)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
    }
}
