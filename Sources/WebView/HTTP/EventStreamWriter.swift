import NIOCore
import NIOHTTP1

/// Sends one viewer's live feed as Server-Sent Events. A batch is written only when the previous
/// one was taken by the kernel: when a batch was full (``MessageFeed/hasMore``) the next follows
/// at once while the viewer is within ``WebViewLimits/maxViewerBytesPerSecond``, otherwise the
/// feed is polled every `interval` (a viewer of a faster session lags, and once its next message
/// left the ring it is told how many it missed). A batch still untaken after
/// ``WebViewLimits/viewerStallPolls`` intervals means the viewer does not read: its feed is told
/// (``MessageFeed/fellBehind()``) and skips ahead with a `missed` event once it reads again.
/// Until then it is not polled, so it costs the relay nothing; what waits for it is one batch
/// in NIO and the connection's send buffer (``WebViewLimits/viewerSendBufferBytes``). Ends when
/// the connection closes.
final class EventStreamWriter: @unchecked Sendable {
    /// What the writer pulls from: a feed's poll, whether its last batch was full, and what to
    /// do when the viewer does not take what it was sent.
    struct Source {
        var poll: (Double) -> [ServerSentEvent]
        var hasMore: () -> Bool = { false }
        var fellBehind: () -> Void = {}
    }

    private let context: ChannelHandlerContext
    private let version: HTTPVersion
    private let interval: TimeAmount
    private let stallPolls: Int
    private let bytesPerSecond: Int
    /// Bytes sent in the current one-second window, and when it began.
    private var windowBytes = 0
    private var windowStart = -Double.infinity
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
        let events = source.poll(now())
        var text = ""
        if events.isEmpty {
            idlePolls += 1
            guard idlePolls >= Self.keepAliveAfter else { return }
            text = ServerSentEvent.keepAlive
        } else {
            for event in events { text += event.text }
        }
        idlePolls = 0
        let time = now()
        if time - windowStart >= 1 { windowStart = time; windowBytes = 0 }
        windowBytes += text.utf8.count
        let more = source.hasMore() && windowBytes < bytesPerSecond
        writing = true
        let buffer = channel.allocator.buffer(string: text)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer)))).whenComplete { [self] result in
            writing = false
            stalledPolls = 0
            guard case .success = result, more else { return }
            // A full batch within the viewer's rate: the next one at once (off this call stack).
            context.eventLoop.execute { [self] in
                if !writing { send() }
            }
        }
    }
}
