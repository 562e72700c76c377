import NIOCore
import ProxyProtocol

/// The first handler of a client connection when the relay sits behind a load balancer that
/// speaks the PROXY protocol: it reads the header (``ProxyHeaderParser``) before anything else
/// sees a byte, TLS included, tells the pipeline whom it names, hands the bytes after it on and
/// leaves the pipeline. A connection without an acceptable header within the timeout is closed
/// and reported (`onRefused`), nothing of it passed on; one that closes before sending a byte
/// (a load balancer's TCP check) is not reported.
final class ProxyHeaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case reading
        case passed
        case refused
    }

    private var parser: ProxyHeaderParser
    private var state = State.reading
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    private let onHeader: (ProxyHeader) -> Void
    private let onRefused: (ProxyRefusal.Reason) -> Void

    init(settings: ProxyProtocolSettings, onHeader: @escaping (ProxyHeader) -> Void,
         onRefused: @escaping (ProxyRefusal.Reason) -> Void) {
        parser = ProxyHeaderParser(limits: settings.limits)
        timeout = settings.headerTimeout
        self.onHeader = onHeader
        self.onRefused = onRefused
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let timeout = self.timeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = bound.value
            handler.refuse(.timeout(timeout), context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .reading else {
            if state == .passed { context.fireChannelRead(data) }
            return
        }
        var buffer = unwrapInboundIn(data)
        do {
            guard case let .header(header, consumed) = try parser.parse(buffer.readableBytesView) else { return }
            state = .passed
            timer?.cancel()
            onHeader(header)
            buffer.moveReaderIndex(forwardBy: consumed)
            if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            refuse(.header(error), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if state == .reading, parser.bytesHeld > 0 {
            refuse(.closed(bytes: parser.bytesHeld), context: context)
        }
        state = state == .passed ? .passed : .refused
        timer?.cancel()
        context.fireChannelInactive()
    }

    private func refuse(_ reason: ProxyRefusal.Reason, context: ChannelHandlerContext) {
        guard state == .reading else { return }
        state = .refused
        timer?.cancel()
        onRefused(reason)
        context.close(promise: nil)
    }
}
