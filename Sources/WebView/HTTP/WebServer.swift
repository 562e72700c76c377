import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A listener that serves only the web view (``WebAPI``): what `blipscope web` runs over capture
/// files. Loopback by default; GET only; every request must pass `authorizes`, given its
/// `Authorization` header or, failing that, `Bearer ` and its `?access_token=` (the admin
/// listener's rule, which `blipscope web` passes in). (The relay serves the same view from its
/// admin listener.)
public final class WebServer: Sendable {
    public typealias Authorization = @Sendable (_ authorizationHeader: String?) -> Bool
    public let host: String
    public let port: Int
    let authorizes: Authorization
    let api: WebAPI
    let slots: ViewerSlots
    private let group: any EventLoopGroup
    private let listener = NIOLockedValueBox<(any Channel)?>(nil)

    public init(api: WebAPI, host: String = "127.0.0.1", port: Int = 0, authorizes: @escaping Authorization = { _ in true },
                group: any EventLoopGroup) {
        self.api = api
        self.authorizes = authorizes
        self.host = host
        self.port = port
        self.group = group
        self.slots = ViewerSlots(limit: api.history.limits.maxViewers)
    }

    /// Binds; returns the bound address.
    public func start() async throws -> SocketAddress {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [api, slots, authorizes] channel in
                channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                    channel.pipeline.addHandler(WebHandler(api: api, slots: slots, authorizes: authorizes))
                }
            }
            .bind(host: host, port: port).get()
        listener.withLockedValue { $0 = channel }
        return channel.localAddress!
    }

    public func shutdown() async throws {
        let channel = listener.withLockedValue { channel in defer { channel = nil }; return channel }
        try await channel?.close()
    }
}

/// One connection of ``WebServer``: routes every request head to ``WebResponder``.
final class WebHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let api: WebAPI
    private let slots: ViewerSlots
    private let authorizes: WebServer.Authorization
    private var head: HTTPRequestHead?

    init(api: WebAPI, slots: ViewerSlots, authorizes: @escaping WebServer.Authorization) {
        self.api = api
        self.slots = slots
        self.authorizes = authorizes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            // The page's own requests (EventSource cannot send headers) carry the token in the
            // query (RFC 6750 §2.3).
            guard authorizes(head.headers.first(name: "authorization"))
                    || (WebRequest(target: head.uri).query["access_token"].map { authorizes("Bearer \($0)") } ?? false) else {
                return WebResponder.write(context, head, .unauthorized, contentType: "text/plain; charset=utf-8",
                                          body: context.channel.allocator.buffer(string: "unauthorized\n"),
                                          extra: [("WWW-Authenticate", "Bearer")])
            }
            guard head.method == .GET else {
                return WebResponder.write(context, head, .methodNotAllowed, contentType: "text/plain; charset=utf-8",
                                          body: context.channel.allocator.buffer(string: "GET only\n"))
            }
            WebResponder.respond(head, api: api, slots: slots, context: context)
        }
    }
}
