import BLIPNIO
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What the upstream answered to the upgrade request.
enum UpstreamOutcome {
    /// 101: the channel now carries WebSocket frames into `hop`.
    case upgraded(channel: Channel, response: HTTPResponseHead)
    /// An HTTP error (401, 403, 404, 500 "I only speak …", 503 …), with its body (capped).
    case refused(response: HTTPResponseHead, body: ByteBuffer)
}

/// Dials the upstream for one session on the client's own event loop (both channels of a session
/// share a loop, so the pumps need no locks) and performs the WebSocket handshake with raw
/// framing. Never hangs: connection failures become 502, a handshake that does not finish within
/// ``RelayConfiguration/upstreamHandshakeTimeout`` becomes 504 (``RelayError``).
struct UpstreamConnector: Sendable {
    let configuration: RelayConfiguration
    /// Built once at server start when any upstream is wss.
    let sslContext: NIOSSLContext?
    /// Largest refusal body kept.
    static let maxRefusalBody = 64 * 1024

    func connect(to url: UpstreamURL, request: WebSocketUpgradeRequest, hop: HopHandler,
                 on eventLoop: EventLoop) -> EventLoopFuture<UpstreamOutcome> {
        let promise = eventLoop.makePromise(of: UpstreamOutcome.self)
        let hopBox = NIOLoopBound(hop, eventLoop: eventLoop)
        let limits = configuration.limits
        let sslContext = url.secure ? sslContext : nil
        let timeout = eventLoop.scheduleTask(in: configuration.upstreamHandshakeTimeout) {
            promise.fail(RelayError(.upstreamTimeout))
        }
        promise.futureResult.whenComplete { _ in timeout.cancel() }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.upstreamHandshakeTimeout)
            .channelOption(.writeBufferWaterMark, value: .init(low: limits.writeBufferLowWater,
                                                               high: limits.writeBufferHighWater))
            .channelOption(.recvAllocator, value: limits.readAllocator)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .keepAlive(configuration.tcpKeepAlive)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        let name = url.host.first?.isLetter == true ? url.host : nil
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    let refusal = RefusalCollector(promise: promise)
                    let refusalBox = NIOLoopBound(refusal, eventLoop: channel.eventLoop)
                    let upgrader = RawWebSocketClientUpgrader(requestKey: request.key) { channel, response in
                        channel.eventLoop.makeCompletedFuture {
                            let sync = channel.pipeline.syncOperations
                            sync.removeHandler(refusalBox.value, promise: nil)
                            try sync.addHandler(hopBox.value)
                            promise.succeed(.upgraded(channel: channel, response: response))
                        }
                    }
                    try request.install(on: sync, upgrader: upgrader)
                    try sync.addHandler(refusal)
                }
            }
        bootstrap.connect(host: url.host, port: url.port).whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(RelayError(.upstreamUnreachable("\(url): \(error)")))
            case .success(let channel):
                promise.futureResult.whenFailure { _ in channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in
                    promise.fail(RelayError(.upstreamHandshake("connection closed before a response")))
                }
                channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        return promise.futureResult
    }
}

/// Collects a non-101 response and completes the outcome with it.
private final class RefusalCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<UpstreamOutcome>
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()

    init(promise: EventLoopPromise<UpstreamOutcome>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var part):
            let room = UpstreamConnector.maxRefusalBody - body.readableBytes
            if room > 0, let slice = part.readSlice(length: min(room, part.readableBytes)) {
                body.writeImmutableBuffer(slice)
            }
        case .end:
            if let head { promise.succeed(.refused(response: head, body: body)) }
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(RelayError(.upstreamHandshake("\(error)")))
        context.close(promise: nil)
    }
}
