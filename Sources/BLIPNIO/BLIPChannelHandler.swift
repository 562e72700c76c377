import BLIPCore
import NIOCore
import NIOWebSocket

/// Drives a ``BLIPEndpoint`` over a WebSocket channel: each complete binary (or text) WebSocket
/// message is one BLIP frame in, and ``BLIPEndpoint/nextFrame()`` is written out as one binary
/// message while the channel is writable (wire-format reference §1.1).
///
/// - Client role masks every frame it sends with a fresh random key (RFC 6455 §5.3).
/// - PING is answered with PONG; a CLOSE received is echoed with the same code, then the channel
///   closes; a fatal BLIP or WebSocket error closes with the code ``BLIPCloseCode`` picks.
/// - Back-pressure: frames are produced only while the channel is writable; ``pauseReading()``
///   stops reading from the socket (to model a slow peer).
///
/// Expects whole messages: put a `NIOWebSocketFrameAggregator` in front of it. Event-loop
/// confined: call every method on the channel's event loop (``BLIPConnection`` hops for you).
public final class BLIPChannelHandler: ChannelDuplexHandler {
    public typealias InboundIn = WebSocketFrame
    public typealias OutboundIn = WebSocketFrame
    public typealias OutboundOut = WebSocketFrame

    public enum Role: Sendable { case client, server }
    /// Called on the event loop for every complete request received; answer with ``sendReply(_:)``.
    public typealias RequestHandler = (BLIPMessage, BLIPChannelHandler) -> Void

    public let role: Role
    public let endpoint: BLIPEndpoint
    private let onRequest: RequestHandler
    private let closePromise: EventLoopPromise<WebSocketClose>
    private var context: ChannelHandlerContext?
    private var replyPromises: [MessageNumber: EventLoopPromise<BLIPMessage>] = [:]
    private var remoteClose: WebSocketClose?
    private var closeSent = false
    private var readingPaused = false
    private var readPending = false
    /// Set once the channel went inactive: later requests fail at once instead of waiting forever.
    private var inactive = false

    public init(role: Role, limits: BLIPLimits = .default, eventLoop: EventLoop,
                onRequest: @escaping RequestHandler = { _, _ in }) {
        self.role = role
        self.endpoint = BLIPEndpoint(limits: limits)
        self.onRequest = onRequest
        self.closePromise = eventLoop.makePromise()
    }

    /// Completes when the channel has closed: with the peer's CLOSE, or ``WebSocketClose/abnormal``.
    public var closed: EventLoopFuture<WebSocketClose> { closePromise.futureResult }

    // MARK: sending

    /// Queues a request. The future gives the reply (RPY or ERR: check `type`); a NoReply request's
    /// future gives the request back as soon as it is queued.
    public func sendRequest(_ request: BLIPMessage) -> EventLoopFuture<BLIPMessage> {
        let eventLoop = closePromise.futureResult.eventLoop
        if inactive { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        let number = endpoint.send(request: request)
        defer { writeFrames() }
        if request.isNoReply { return eventLoop.makeSucceededFuture(request) }
        let promise = eventLoop.makePromise(of: BLIPMessage.self)
        replyPromises[number] = promise
        return promise.futureResult
    }

    public func sendReply(_ reply: BLIPMessage) {
        endpoint.send(reply: reply)
        writeFrames()
    }

    /// Starts the closing handshake with `code` and `reason`.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard let context, !closeSent else { return }
        closeSent = true
        let close = WebSocketClose(code: code, reason: reason)
        context.writeAndFlush(wrapOutboundOut(frame(.connectionClose, close.payload(allocator: context.channel.allocator))),
                              promise: nil)
        if remoteClose != nil { context.close(promise: nil) }
    }

    /// Sends a WebSocket PING (a heartbeat, as LiteCore's replicator sends on an idle connection);
    /// the peer answers PONG.
    public func sendPing() {
        guard let context, !closeSent, !inactive else { return }
        context.writeAndFlush(wrapOutboundOut(frame(.ping, context.channel.allocator.buffer(capacity: 0))), promise: nil)
    }

    public func pauseReading() { readingPaused = true }

    public func resumeReading() {
        readingPaused = false
        if readPending, let context {
            readPending = false
            context.read()
        }
    }

    // MARK: channel events

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    public func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary, .text:
            receive(frame.unmaskedData)
        case .ping:
            context.write(wrapOutboundOut(self.frame(.pong, frame.unmaskedData)), promise: nil)
        case .connectionClose:
            remoteClose = WebSocketClose(payload: frame.unmaskedData)
            if closeSent {
                context.close(promise: nil)
            } else {
                close(code: remoteClose!.code == 1005 ? 1000 : remoteClose!.code, reason: remoteClose!.reason)
            }
        default:
            break
        }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        writeFrames()
        context.flush()
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { writeFrames() }
        context.fireChannelWritabilityChanged()
    }

    public func read(context: ChannelHandlerContext) {
        if readingPaused { readPending = true } else { context.read() }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        let close = remoteClose ?? .abnormal
        inactive = true
        for promise in replyPromises.values { promise.fail(ChannelError.ioOnClosedChannel) }
        replyPromises.removeAll()
        closePromise.succeed(close)
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let (code, reason) = BLIPCloseCode.forError(error)
        close(code: BLIPCloseCode.number(code), reason: reason)
        context.close(promise: nil)
    }

    // MARK: internals

    private func receive(_ bytes: ByteBuffer) {
        let decoded: DecodedFrame
        do {
            decoded = try endpoint.receive(bytes)
        } catch {
            let (code, reason) = BLIPCloseCode.forError(error)
            close(code: BLIPCloseCode.number(code), reason: reason)
            return
        }
        guard let message = decoded.message else { return }
        if message.type == .request {
            onRequest(message, self)
        } else if let promise = replyPromises.removeValue(forKey: message.number) {
            promise.succeed(message)
        }
    }

    /// Writes frames while the channel takes them; the caller's read-complete flushes, or this does.
    private func writeFrames() {
        guard let context, !closeSent else { return }
        var wrote = false
        while context.channel.isWritable {
            let next: OutgoingFrame?
            do {
                next = try endpoint.nextFrame(allocator: context.channel.allocator)
            } catch {
                let (code, reason) = BLIPCloseCode.forError(error)
                close(code: BLIPCloseCode.number(code), reason: reason)
                return
            }
            guard let next else { break }
            context.write(wrapOutboundOut(frame(.binary, next.bytes)), promise: nil)
            wrote = true
        }
        if wrote { context.flush() }
    }

    private func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: role == .client ? .random() : nil, data: data)
    }
}
