import BLIPCore

/// One decoded BLIP message of a captured session: who sent it and when, in seconds since the
/// session began.
public struct RecordedMessage: Sendable {
    public var direction: BLIPDirection
    public var message: BLIPMessage
    public var time: Double

    public init(direction: BLIPDirection, message: BLIPMessage, time: Double) {
        self.direction = direction
        self.message = message
        self.time = time
    }
}

/// The WebSocket handshake of a captured session: what the client asked for and what the
/// server chose (wire-format reference §1.2).
public struct RecordedHandshake: Sendable {
    /// Request target, e.g. `/db/_blipsync`.
    public var target: String
    /// Request headers in order, as captured (secrets may have been redacted by the relay).
    public var requestHeaders: [(name: String, value: String)]
    /// The sub-protocols the client offered, in its order.
    public var offeredSubprotocols: [String]
    /// The sub-protocol the server chose.
    public var subprotocol: String?

    public init(target: String = "/db/_blipsync", requestHeaders: [(name: String, value: String)] = [],
                offeredSubprotocols: [String] = [], subprotocol: String? = nil) {
        self.target = target
        self.requestHeaders = requestHeaders
        self.offeredSubprotocols = offeredSubprotocols
        self.subprotocol = subprotocol
    }

    /// True when the recorded client sent an `Authorization` header (its value may be redacted).
    public var sentCredentials: Bool { requestHeaders.contains { $0.name.lowercased() == "authorization" } }
}
