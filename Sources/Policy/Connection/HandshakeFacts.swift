/// What the relay knows of a client at its WebSocket upgrade (wire-format reference §1.2).
public struct HandshakeFacts: Sendable {
    public var clientIP: String
    public let clientAddress: PolicyIPAddress?
    /// Basic-auth user name or `cookie:<name>`; nil when anonymous (not counted per user).
    public var user: String?
    public var database: String
    /// The `Sec-WebSocket-Protocol` values the client offered.
    public var offeredSubprotocols: [String]
    /// Whether the client connected over wss.
    public var tls: Bool

    public init(clientIP: String, user: String?, database: String, offeredSubprotocols: [String], tls: Bool) {
        self.clientIP = clientIP
        self.clientAddress = PolicyIPAddress(clientIP)
        self.user = user
        self.database = database
        self.offeredSubprotocols = offeredSubprotocols
        self.tls = tls
    }
}
