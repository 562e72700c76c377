import NIOCore
import NIOHTTP1
import NIOWebSocket

/// NIO's WebSocket server upgrader, whose 101 says `Connection: Upgrade` as Sync Gateway and
/// LiteCore write it rather than NIO's lower-case `upgrade` (wire-format reference §1.2); the
/// handshake itself (`Sec-WebSocket-Accept`, version check) is NIO's. `upgraded`, when given,
/// replaces NIO's pipeline set-up after the 101 (the relay installs no frame handler at all).
public struct SpelledWebSocketServerUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let upgrader: NIOWebSocketServerUpgrader
    private let upgraded: (@Sendable (Channel, HTTPRequestHead) -> EventLoopFuture<Void>)?

    public init(_ upgrader: NIOWebSocketServerUpgrader,
                upgraded: (@Sendable (Channel, HTTPRequestHead) -> EventLoopFuture<Void>)? = nil) {
        self.upgrader = upgrader
        self.upgraded = upgraded
    }

    public var supportedProtocol: String { upgrader.supportedProtocol }
    public var requiredUpgradeHeaders: [String] { upgrader.requiredUpgradeHeaders }

    public func buildUpgradeResponse(channel: Channel, upgradeRequest: HTTPRequestHead,
                              initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        upgrader.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest,
                                      initialResponseHeaders: initialResponseHeaders)
            .map { headers in
                var headers = headers
                headers.spellConnectionUpgrade()
                return headers
            }
    }

    public func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        if let upgraded { return upgraded(context.channel, upgradeRequest) }
        return upgrader.upgrade(context: context, upgradeRequest: upgradeRequest)
    }
}
