import BLIPNIO
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A server-side WebSocket upgrader that installs no frame handler at all: the relay's
/// ``SessionCore`` reads and writes the WebSocket stream as raw bytes (its scanner finds the
/// frames), and NIO's encoder (which always re-masks and cannot be removed) would be in the way
/// (reference notes §1, gotcha 2). The handshake (`Sec-WebSocket-Accept`, version check, the
/// headers `shouldUpgrade` returns, `Connection: Upgrade`) is ``SpelledWebSocketServerUpgrader``'s.
enum RawWebSocketServerUpgrader {
    static func make(shouldUpgrade: @escaping @Sendable (Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
                     upgraded: @escaping @Sendable (Channel, HTTPRequestHead) -> EventLoopFuture<Void>)
        -> SpelledWebSocketServerUpgrader {
        SpelledWebSocketServerUpgrader(
            NIOWebSocketServerUpgrader(automaticErrorHandling: false, shouldUpgrade: shouldUpgrade,
                                       upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }),
            upgraded: upgraded)
    }
}

/// The client-side counterpart: NIO's key generation and `Sec-WebSocket-Accept` check, then no
/// frame handler.
struct RawWebSocketClientUpgrader: NIOHTTPClientProtocolUpgrader, Sendable {
    let supportedProtocol = "websocket"
    let requiredUpgradeHeaders: [String] = []
    private let handshake: NIOWebSocketClientUpgrader
    private let upgraded: @Sendable (Channel, HTTPResponseHead) -> EventLoopFuture<Void>

    /// `requestKey` is the planned request's `Sec-WebSocket-Key` (``WebSocketUpgradeRequest/key``).
    init(requestKey: String, upgraded: @escaping @Sendable (Channel, HTTPResponseHead) -> EventLoopFuture<Void>) {
        self.upgraded = upgraded
        self.handshake = NIOWebSocketClientUpgrader(requestKey: requestKey, automaticErrorHandling: false,
                                                    upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
    }

    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        handshake.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        handshake.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
    }

    func upgrade(context: ChannelHandlerContext, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Void> {
        upgraded(context.channel, upgradeResponse)
    }
}
