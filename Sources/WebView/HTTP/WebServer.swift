import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A listener that serves only the web view (``WebAPI``): what `blipscope web` runs over capture
/// files. Loopback by default; GET only; with a token, every request must carry it (as
/// `Authorization: Bearer` or `?access_token=`). (The relay serves the same view from its admin
/// listener, under that listener's rules.)
public final class WebServer: Sendable {
    public let host: String
    public let port: Int
    public let token: String?
    let api: WebAPI
    let slots: ViewerSlots
    private let group: any EventLoopGroup
    private let listener = NIOLockedValueBox<(any Channel)?>(nil)

    public init(api: WebAPI, host: String = "127.0.0.1", port: Int = 0, token: String? = nil, group: any EventLoopGroup) {
        self.api = api
        self.token = token
        self.host = host
        self.port = port
        self.group = group
        self.slots = ViewerSlots(limit: api.history.limits.maxViewers)
    }

    /// Binds; returns the bound address.
    public func start() async throws -> SocketAddress {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [api, slots, token] channel in
                channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMap {
                    channel.pipeline.addHandler(WebHandler(api: api, slots: slots, token: token))
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
    private let token: String?
    private var head: HTTPRequestHead?

    init(api: WebAPI, slots: ViewerSlots, token: String?) {
        self.api = api
        self.slots = slots
        self.token = token
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            if let token, !token.isEmpty {
                let given = head.headers.first(name: "authorization").flatMap { value -> String? in
                    let parts = value.split(separator: " ", maxSplits: 1)
                    return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
                } ?? WebRequest(target: head.uri).query["access_token"]
                guard let given, Self.same(given, token) else {
                    return WebResponder.write(context, head, .unauthorized, contentType: "text/plain; charset=utf-8",
                                              body: context.channel.allocator.buffer(string: "unauthorized\n"),
                                              extra: [("WWW-Authenticate", "Bearer")])
                }
            }
            guard head.method == .GET else {
                return WebResponder.write(context, head, .methodNotAllowed, contentType: "text/plain; charset=utf-8",
                                          body: context.channel.allocator.buffer(string: "GET only\n"))
            }
            WebResponder.respond(head, api: api, slots: slots, context: context)
        }
    }

    /// Compares in time independent of where the two differ.
    static func same(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8), expected = Array(expected.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
