import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The relay's handler on one of a session's two channels (one hop: client ⇄ relay or
/// relay ⇄ upstream), in the spirit of a glue handler: it feeds what its channel does to the
/// session's ``SessionCore`` (bytes read, read batches, read requests, writability, the end) and
/// carries out the writes, flushes and reads the core answers with. NIO's WebSocket frame
/// decoder is not in the pipeline: the core finds the frames itself.
///
/// Event-loop confined, like the session: both channels of a session share one event loop.
final class HopHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let side: SessionSide
    /// Set while the hop belongs to a session; cleared when the session ends (breaks the cycle).
    var session: RelaySession?
    private(set) var context: ChannelHandlerContext?

    init(side: SessionSide) { self.side = side }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: carried out for the core

    var isWritable: Bool { context?.channel.isWritable ?? false }

    func write(_ bytes: ByteBuffer) { context?.write(wrapOutboundOut(bytes), promise: nil) }

    func flush() { context?.flush() }

    func issueRead() { context?.read() }

    /// Has the kernel acknowledge what this hop received at once (`TCP_QUICKACK`; the kernel
    /// drops back to delayed acknowledgements by itself, so it is asked each time).
    func acknowledgeNow() {
        #if os(Linux)
        try? context?.channel.syncOptions?.setOption(Self.quickAck, value: 1)
        #endif
    }

    #if os(Linux)
    private static let quickAck = ChannelOptions.Types.SocketOption.tcpOption(.init(rawValue: TCP_QUICKACK))
    #endif

    /// Bytes queued in the channel, not yet taken by the kernel.
    var bufferedBytes: Int {
        (try? context?.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
    }

    // MARK: fed to the core

    func read(context: ChannelHandlerContext) {
        guard let session else { return context.read() }
        session.handle(.readRequested(side))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        session?.handle(.writability(side, isWritable: context.channel.isWritable))
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        session?.handle(.bytes(side, unwrapInboundIn(data), at: .now()))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        session?.handle(.readComplete(side))
    }

    func channelInactive(context: ChannelHandlerContext) {
        session?.handle(.connectionClosed(side, at: .now()))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session?.handle(.channelFailed(side))
    }
}
