import BLIPCore
import NIOCore
import NIOHTTP1

/// A handle on one open BLIP WebSocket, usable from any thread: each call hops to the channel's
/// event loop and works on its ``BLIPChannelHandler`` there.
public struct BLIPConnection: Sendable {
    public let channel: Channel
    /// The sub-protocol the server chose (`Sec-WebSocket-Protocol` of the 101), if any.
    public let subprotocol: String?
    /// The handshake headers: the request's on a server connection, the 101 response's on a client.
    public let handshakeHeaders: HTTPHeaders
    private let handler: NIOLoopBound<BLIPChannelHandler>

    public init(channel: Channel, handler: BLIPChannelHandler, subprotocol: String?, handshakeHeaders: HTTPHeaders) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.closed = handler.closed
        self.subprotocol = subprotocol
        self.handshakeHeaders = handshakeHeaders
    }

    /// Completes when the channel closed, with the peer's CLOSE or ``WebSocketClose/abnormal``.
    public let closed: EventLoopFuture<WebSocketClose>

    /// Sends a request and waits for its reply (RPY or ERR). A NoReply request returns itself once queued.
    public func request(_ message: BLIPMessage) async throws -> BLIPMessage {
        try await onLoop { $0.sendRequest(message) }.get()
    }

    /// Sends a request without waiting for the reply; the future completes with it.
    public func send(_ message: BLIPMessage) async throws -> EventLoopFuture<BLIPMessage> {
        try await onLoop { $0.sendRequest(message) }
    }

    public func close(code: UInt16 = 1000, reason: String = "") async throws {
        try await onLoop { $0.close(code: code, reason: reason) }
    }

    /// Sends a WebSocket PING (a heartbeat); from any thread.
    public func ping() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.sendPing() }
    }

    public func pauseReading() async throws { try await onLoop { $0.pauseReading() } }
    public func resumeReading() async throws { try await onLoop { $0.resumeReading() } }

    /// Runs `body` on the event loop with the handler.
    public func onLoop<T: Sendable>(_ body: @escaping @Sendable (BLIPChannelHandler) -> T) async throws -> T {
        let handler = self.handler
        return try await channel.eventLoop.submit { body(handler.value) }.get()
    }
}
