import NIOCore
import NIOHTTP1
import NIOWebSocket

/// NIO's WebSocket server upgrader, whose 101 says `Connection: Upgrade` as Sync Gateway and
/// LiteCore write it rather than NIO's lower-case `upgrade` (wire-format reference §1.2); the
/// handshake itself (`Sec-WebSocket-Accept`, version check) is NIO's.
struct SpelledWebSocketServerUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let upgrader: NIOWebSocketServerUpgrader

    init(_ upgrader: NIOWebSocketServerUpgrader) { self.upgrader = upgrader }

    var supportedProtocol: String { upgrader.supportedProtocol }
    var requiredUpgradeHeaders: [String] { upgrader.requiredUpgradeHeaders }

    func buildUpgradeResponse(channel: Channel, upgradeRequest: HTTPRequestHead,
                              initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        upgrader.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest,
                                      initialResponseHeaders: initialResponseHeaders)
            .map { headers in
                var headers = headers
                headers.spellConnectionUpgrade()
                return headers
            }
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        upgrader.upgrade(context: context, upgradeRequest: upgradeRequest)
    }
}
