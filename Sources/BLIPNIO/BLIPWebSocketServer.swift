import BLIPCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A listening BLIP WebSocket server (ws or wss) whose connections are ``BLIPChannelHandler``s in the
/// server role: the test upstream for the relay, and the transport the embedded gateway will use.
///
/// Every upgrade request is put to ``Configuration/decide``; a request without an `Upgrade`
/// header gets the same treatment, which refuses it unless it asks for a 101 it cannot have.
public final class BLIPWebSocketServer: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 0
        public var tls: BLIPServerTLS?
        public var limits = BLIPLimits.default
        /// Largest WebSocket frame accepted (wire-format reference §1.1: LiteCore takes 1 MiB).
        public var maxFrameSize = 1 << 20
        /// Decides each handshake; by default Sync Gateway's rule over CBMobile 4, 3, 2.
        public var decide: @Sendable (HTTPRequestHead) -> BLIPHandshakeDecision = { head in
            .syncGatewayChoice(offered: BLIPHandshakeDecision.offeredProtocols(head.headers),
                               supported: ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"])
        }
        /// Answers requests on every connection; called on its event loop.
        public var onRequest: @Sendable (BLIPMessage, BLIPChannelHandler) -> Void = { _, _ in }
        /// Called once per upgraded connection.
        public var onConnection: @Sendable (BLIPConnection) -> Void = { _ in }
        /// Socket receive buffer for accepted connections (small values make back-pressure visible).
        public var receiveBufferSize: Int?

        public init() {}
    }

    public let localAddress: SocketAddress
    private let channel: Channel

    private init(channel: Channel) {
        self.channel = channel
        self.localAddress = channel.localAddress!
    }

    public static func start(_ configuration: Configuration, group: EventLoopGroup) async throws -> BLIPWebSocketServer {
        let sslContext = try configuration.tls?.makeContext()
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try configureChild(channel, configuration: configuration, sslContext: sslContext)
                }
            }
        if let size = configuration.receiveBufferSize {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(size))
        }
        let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        return BLIPWebSocketServer(channel: channel)
    }

    public func close() async throws { try await channel.close() }

    private static func configureChild(_ channel: Channel, configuration: Configuration,
                                       sslContext: NIOSSLContext?) throws {
        let sync = channel.pipeline.syncOperations
        if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
        let refusal = HTTPRefusalHandler(decide: configuration.decide)
        let decisions = NIOLoopBound(refusal, eventLoop: channel.eventLoop)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: configuration.maxFrameSize, automaticErrorHandling: false,
            shouldUpgrade: { channel, head in
                let decision = configuration.decide(head)
                decisions.value.decision = decision
                switch decision {
                case .accept(let subprotocol, var headers):
                    if let subprotocol { headers.replaceOrAdd(name: "Sec-WebSocket-Protocol", value: subprotocol) }
                    return channel.eventLoop.makeSucceededFuture(headers)
                case .refuse, .hang:
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    sync.removeHandler(decisions.value).whenComplete { _ in }
                    var subprotocol: String?
                    if case .accept(let chosen, _) = decisions.value.decision { subprotocol = chosen }
                    let handler = BLIPChannelHandler(role: .server, limits: configuration.limits,
                                                     eventLoop: channel.eventLoop, onRequest: configuration.onRequest)
                    try sync.addHandler(NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                        maxAccumulatedFrameSize: configuration.limits.maxIncomingFrameSize))
                    try sync.addHandler(handler)
                    configuration.onConnection(BLIPConnection(channel: channel, handler: handler,
                                                              subprotocol: subprotocol, handshakeHeaders: head.headers))
                }
            })
        try sync.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [SpelledWebSocketServerUpgrader(upgrader)],
                                                                 completionHandler: { _ in }))
        try sync.addHandler(refusal)
    }
}

/// Answers the requests the server does not upgrade, with the decision's status, headers and
/// body, then closes. Removed from the pipeline on upgrade.
final class HTTPRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    var decision: BLIPHandshakeDecision?
    private let decide: @Sendable (HTTPRequestHead) -> BLIPHandshakeDecision

    init(decide: @escaping @Sendable (HTTPRequestHead) -> BLIPHandshakeDecision) { self.decide = decide }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let decision = self.decision ?? decide(head)
        switch decision {
        case .hang:
            return
        case .accept:
            respond(context: context, status: .badRequest, headers: [:], body: "expected a WebSocket upgrade")
        case .refuse(let status, let headers, let body):
            respond(context: context, status: status, headers: headers, body: body)
        }
    }

    /// Upgrade refusals surface as errors first; the response above is the answer to them.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketUpgradeError { return }
        context.close(promise: nil)
    }

    private func respond(context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders, body: String) {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.utf8.count))
        headers.replaceOrAdd(name: "Connection", value: "close")
        if !body.isEmpty && !headers.contains(name: "Content-Type") {
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                      promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
