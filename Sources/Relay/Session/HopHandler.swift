import NIOCore
import NIOWebSocket

/// The relay's handler on one of a session's two channels (one hop: client⇄relay or
/// relay⇄upstream). It finds the WebSocket frames in the bytes received (its
/// ``WebSocketFrameScanner``; NIO's frame decoder is not in the pipeline) and hands each read's
/// frames to the session, writes raw bytes the other pump gives it, and applies back-pressure like a glue handler: `read()` is
/// held while the partner channel is not writable, and released when it becomes writable again
/// (reference notes §1); likewise while ``RelaySession/mayRead(_:)`` says no for another reason
/// (a capture's read gate, the mediator's delay budget), until the session resumes it.
///
/// Event-loop confined, like the session: both channels of a session share one event loop.
final class HopHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Side: Int { case client = 0, upstream = 1 }

    let side: Side
    /// Set while the hop belongs to a session; cleared when the session ends (breaks the cycle).
    var session: RelaySession?
    private(set) var context: ChannelHandlerContext?
    private var readHeld = false
    private var scanner: WebSocketFrameScanner
    /// Set once the received bytes were not acceptable framing (the session is closing).
    private var framingFailed = false

    /// `maxFrameSize`: the largest frame payload the peer may send (a bigger one ends the session
    /// with 1009, ``RelayError/closeCode``).
    init(side: Side, maxFrameSize: Int) {
        self.side = side
        self.scanner = WebSocketFrameScanner(maxFrameSize: maxFrameSize)
    }

    /// The direction of frames this hop receives.
    var inboundDirection: RelayDirection { side == .client ? .clientToServer : .serverToClient }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: writing (called by the session's pumps)

    var isWritable: Bool { context?.channel.isWritable ?? false }

    func write(_ bytes: ByteBuffer) {
        session?.idleWatch?.sawTraffic = true
        context?.write(wrapOutboundOut(bytes), promise: nil)
    }

    func flush() { context?.flush() }

    /// Bytes queued in the channel, not yet taken by the kernel.
    var bufferedBytes: Int {
        (try? context?.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
    }

    // MARK: back-pressure

    func read(context: ChannelHandlerContext) {
        if session?.mayRead(self) ?? true {
            context.read()
        } else if !readHeld {
            readHeld = true
            session?.flowChanged(self, paused: true)
        }
    }

    /// Issues the read held back, if any.
    func resumeReading() {
        guard readHeld, let context else { return }
        readHeld = false
        session?.flowChanged(self, paused: false)
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { session?.partnerWritable(self) }
        context.fireChannelWritabilityChanged()
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !framingFailed else {
            // As NIO's ByteToMessageHandler did after a decoding error: more bytes from a peer
            // that broke the framing close its connection (the session already sent its CLOSE).
            context.close(promise: nil)
            return
        }
        guard let session else { return }
        session.idleWatch?.sawTraffic = true
        scanner.append(unwrapInboundIn(data))
        do {
            try session.received(&scanner, on: self)
        } catch {
            framingFailed = true
            session.hopFailed(self, error: error)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        session?.readBatchComplete(on: self)
    }

    func channelInactive(context: ChannelHandlerContext) {
        session?.hopClosed(self)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session?.hopFailed(self, error: error)
    }
}
