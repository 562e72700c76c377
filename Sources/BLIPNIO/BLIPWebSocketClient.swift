import BLIPCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// Dials a BLIP WebSocket (ws or wss) and runs a ``BLIPChannelHandler`` in the client role on it:
/// the test client for the relay, and the active side of the gateway to come.
///
/// Sends `Sec-WebSocket-Protocol` as one comma-joined value, as LiteCore does (wire-format
/// reference §1.2), never offers `permessage-deflate` (§1.1), and reports an HTTP refusal as a
/// value rather than an error so callers can check status, headers and body.
public enum BLIPWebSocketClient {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 4984
        /// Request target, e.g. `/db/_blipsync`.
        public var path = "/db/_blipsync"
        public var subprotocols = ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"]
        /// Extra request headers (Authorization, Cookie …).
        public var headers: HTTPHeaders = [:]
        public var tls: BLIPClientTLS?
        /// SNI and host-name check for wss; nil uses `host` when it is a name.
        public var serverHostname: String?
        public var limits = BLIPLimits.default
        public var maxFrameSize = 1 << 20
        public var onRequest: @Sendable (BLIPMessage, BLIPChannelHandler) -> Void = { _, _ in }
        /// Socket send buffer (small values make back-pressure visible).
        public var sendBufferSize: Int?
        /// Called on the connection's event loop as soon as the upgrade is done, before
        /// ``connect(_:group:)`` returns: what it adds to the pipeline or starts sees the peer's
        /// first frame and misses no time of the session.
        public var onConnection: @Sendable (BLIPConnection) -> Void = { _ in }

        public init() {}
    }

    public enum Outcome: Sendable {
        case connected(BLIPConnection)
        case refused(status: HTTPResponseStatus, headers: HTTPHeaders, body: String)

        /// The connection, or nil when refused.
        public var connection: BLIPConnection? {
            if case .connected(let connection) = self { return connection }
            return nil
        }
    }

    public static func connect(_ configuration: Configuration, group: EventLoopGroup) async throws -> Outcome {
        let sslContext = try configuration.tls?.makeContext()
        let eventLoop = group.next()
        let request = WebSocketUpgradeRequest(uri: configuration.path, host: "\(configuration.host):\(configuration.port)",
                                              subprotocols: configuration.subprotocols, headers: configuration.headers)
        let outcome = eventLoop.makePromise(of: Outcome.self)
        var bootstrap = ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try configurePipeline(channel, configuration, request: request, sslContext: sslContext, outcome: outcome)
                }
            }
        if let size = configuration.sendBufferSize {
            bootstrap = bootstrap.channelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(size))
        }
        let channel: Channel
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        } catch {
            outcome.fail(error)
            throw error
        }
        channel.closeFuture.whenComplete { _ in outcome.fail(ChannelError.ioOnClosedChannel) }
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        return try await outcome.futureResult.get()
    }

    private static func configurePipeline(_ channel: Channel, _ configuration: Configuration, request: WebSocketUpgradeRequest,
                                          sslContext: NIOSSLContext?, outcome: EventLoopPromise<Outcome>) throws {
        let sync = channel.pipeline.syncOperations
        if let sslContext {
            let hostname = configuration.serverHostname ?? (configuration.host.first?.isLetter == true ? configuration.host : nil)
            try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: hostname))
        }
        let refusal = HTTPRefusalCollector(outcome: outcome)
        let bound = NIOLoopBound(refusal, eventLoop: channel.eventLoop)
        let upgrader = NIOWebSocketClientUpgrader(
            requestKey: request.key, maxFrameSize: configuration.maxFrameSize, automaticErrorHandling: false,
            upgradePipelineHandler: { channel, response in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    sync.removeHandler(bound.value).whenComplete { _ in }
                    let handler = BLIPChannelHandler(role: .client, limits: configuration.limits,
                                                     eventLoop: channel.eventLoop, onRequest: configuration.onRequest)
                    try sync.addHandler(NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                        maxAccumulatedFrameSize: configuration.limits.maxIncomingFrameSize))
                    try sync.addHandler(handler)
                    let chosen = response.headers.first(name: "Sec-WebSocket-Protocol")
                    let connection = BLIPConnection(channel: channel, handler: handler, subprotocol: chosen,
                                                    handshakeHeaders: response.headers)
                    configuration.onConnection(connection)
                    outcome.succeed(.connected(connection))
                }
            })
        try request.install(on: sync, upgrader: upgrader)
        try sync.addHandler(refusal)
    }
}

/// Collects a non-101 answer to the upgrade request (status, headers, body) and closes.
final class HTTPRefusalCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let outcome: EventLoopPromise<BLIPWebSocketClient.Outcome>
    private var head: HTTPResponseHead?
    private var body = ""

    init(outcome: EventLoopPromise<BLIPWebSocketClient.Outcome>) { self.outcome = outcome }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(var buffer): body += buffer.readString(length: buffer.readableBytes) ?? ""
        case .end:
            if let head { outcome.succeed(.refused(status: head.status, headers: head.headers, body: body)) }
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        outcome.fail(error)
        context.close(promise: nil)
    }
}
