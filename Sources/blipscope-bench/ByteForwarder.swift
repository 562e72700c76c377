import NIOCore
import NIOPosix

/// The floor under `bench relay --floor`: a TCP forwarder on SwiftNIO that copies bytes both ways
/// and does nothing else (no HTTP, no WebSocket framing, no decoding, no logging). Its CPU per
/// round trip is what event loops and sockets cost on this library and machine before a relay
/// does any work of its own, so the relay's CPU can be read against it as well as against nginx.
///
/// Each accepted connection gets one upstream connection on the same event loop; a side reads
/// only while the other side's channel is writable, so what waits to be written on a side is at
/// most NIO's write-buffer high-water mark plus one read batch of the other.
enum ByteForwarder {
    /// Listens on 127.0.0.1:`listenPort` (0: any free port) and forwards every connection to
    /// 127.0.0.1:`upstreamPort`. Returns the listening channel.
    static func start(listenPort: Int = 0, upstreamPort: Int, group: EventLoopGroup) async throws -> Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { client in
                let (clientSide, upstreamSide) = ForwardingHandler.pair()
                return ClientBootstrap(group: client.eventLoop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: "127.0.0.1", port: upstreamPort)
                    .flatMap { upstream in
                        upstream.pipeline.addHandler(upstreamSide).flatMap { client.pipeline.addHandler(clientSide) }
                    }
            }
            .bind(host: "127.0.0.1", port: listenPort).get()
    }
}

/// One side of a forwarded connection: what it reads, its partner writes; the partner flushes
/// when this side's read batch ends; it reads only while the partner can write; either side's
/// end closes both.
///
/// `@unchecked Sendable`: both sides of a pair live on one event loop and are only touched there.
final class ForwardingHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: ForwardingHandler?
    private var context: ChannelHandlerContext?
    /// A read was asked for while the partner could not take more.
    private var readPending = false

    /// Two handlers that forward to each other.
    static func pair() -> (ForwardingHandler, ForwardingHandler) {
        let first = ForwardingHandler(), second = ForwardingHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The partner, added first, may have been asked to read before this side was there.
        if let partner, partner.readPending, context.channel.isWritable {
            partner.readPending = false
            partner.context?.read()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }

    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }

    func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }

    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // This side can take bytes again: the partner may read what it was asked to.
        guard context.channel.isWritable, let partner, partner.readPending else { return }
        partner.readPending = false
        partner.context?.read()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable == true {
            context.read()
        } else {
            readPending = true
        }
    }
}
