import NIOCore
import NIOHTTP1

/// Sends one viewer's live feed as Server-Sent Events, at most
/// ``WebViewLimits/maxViewerBytesPerSecond`` on average: a token bucket of one second's bytes,
/// refilled as time passes, pays for every byte written, and a poll's batch may take at most what
/// is in it (at least one row). A batch is written only when the previous one was taken by the
/// kernel: when a batch was full (``MessageFeed/hasMore``) the next follows at once while the
/// bucket has bytes, otherwise the feed is polled every `interval`; an empty bucket skips the poll
/// (a viewer of a faster session lags, and once its next message left the ring it is told how
/// many it missed). A batch still untaken after ``WebViewLimits/viewerStallPolls`` intervals
/// means the viewer does not read: its feed is told (``MessageFeed/fellBehind()``) and skips
/// ahead with a `missed` event once it reads again. Until then it is not polled, so it costs the
/// relay nothing; what waits for it is one batch in NIO and the connection's send buffer
/// (``WebViewLimits/viewerSendBufferBytes``). Ends when the connection closes.
final class EventStreamWriter: @unchecked Sendable {
    /// What the writer pulls from: a feed's poll, whether its last batch was full, and what to
    /// do when the viewer does not take what it was sent.
    struct Source {
        /// The events since the last poll, their rows within the byte budget given (at least one row).
        var poll: (_ now: Double, _ budget: Int) -> [ServerSentEvent]
        var hasMore: () -> Bool = { false }
        var fellBehind: () -> Void = {}
    }

    private let context: ChannelHandlerContext
    private let version: HTTPVersion
    private let interval: TimeAmount
    private let stallPolls: Int
    private let bytesPerSecond: Int
    /// Bytes the viewer may be sent now (the bucket holds at most one second's), and when it was
    /// last refilled. Below zero after a row larger than what was left: paid back before the next.
    private var allowance: Double
    private var refilledAt = Double.nan
    private let source: Source
    private let now: @Sendable () -> Double
    private let onEnd: @Sendable () -> Void
    private var task: RepeatedTask?
    private var idlePolls = 0
    /// A batch handed to NIO that the kernel has not taken yet.
    private var writing = false
    private var stalledPolls = 0

    /// Polls without anything to send before a keep-alive comment.
    static let keepAliveAfter = 40

    init(context: ChannelHandlerContext, version: HTTPVersion, interval: TimeAmount, stallPolls: Int,
         bytesPerSecond: Int, source: Source, now: @escaping @Sendable () -> Double, onEnd: @escaping @Sendable () -> Void) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.allowance = Double(max(1, bytesPerSecond))
        self.context = context
        self.version = version
        self.interval = interval
        self.stallPolls = max(1, stallPolls)
        self.source = source
        self.now = now
        self.onEnd = onEnd
    }

    /// Writes the head and the first events; called on the connection's event loop.
    func start(sendBufferBytes: Int) {
        if sendBufferBytes > 0 {
            context.channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(sendBufferBytes))
                .whenFailure { _ in }
        }
        let headers = HTTPHeaders([("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                   ("X-Accel-Buffering", "no")])
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers))),
                      promise: nil)
        send()
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
        if writing || !channel.isWritable {
            stalledPolls += 1
            if stalledPolls == stallPolls { source.fellBehind() }
            return
        }
        stalledPolls = 0
        send()
    }

    private func send() {
        let channel = context.channel
        guard channel.isActive else { return }
        let time = now()
        if !refilledAt.isNaN {
            allowance = min(Double(bytesPerSecond), allowance + max(0, time - refilledAt) * Double(bytesPerSecond))
        }
        refilledAt = time
        // Nothing left to spend: not even polled, so a viewer past its rate costs nothing.
        guard allowance >= 1 else { return }
        let events = source.poll(time, Int(allowance))
        var text = ""
        if events.isEmpty {
            idlePolls += 1
            guard idlePolls >= Self.keepAliveAfter else { return }
            text = ServerSentEvent.keepAlive
        } else {
            for event in events { text += event.text }
        }
        idlePolls = 0
        allowance -= Double(text.utf8.count)
        let more = source.hasMore() && allowance >= 1
        writing = true
        let buffer = channel.allocator.buffer(string: text)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer)))).whenComplete { [self] result in
            writing = false
            stalledPolls = 0
            guard case .success = result, more else { return }
            // A full batch with bytes left in the bucket: the next one at once (off this call stack).
            context.eventLoop.execute { [self] in
                if !writing { send() }
            }
        }
    }
}
