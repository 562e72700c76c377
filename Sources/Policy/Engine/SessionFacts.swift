/// Who a session belongs to, as fixed at its handshake. Built once per session (the client
/// address is parsed here, not per message).
public struct SessionFacts: Sendable {
    public var id: UInt64
    /// Basic-auth user name or `cookie:<name>`; nil when anonymous.
    public var user: String?
    /// The client's IP address as text, and parsed (nil when it does not parse).
    public var clientIP: String
    public let clientAddress: PolicyIPAddress?
    public var database: String
    /// The sub-protocol in use (`BLIP_3+CBMobile_3`).
    public var subprotocol: String?
    /// Whether the client connected over wss.
    public var tls: Bool

    public init(id: UInt64, user: String?, clientIP: String, database: String = "",
                subprotocol: String? = nil, tls: Bool = false) {
        self.id = id
        self.user = user
        self.clientIP = clientIP
        self.clientAddress = PolicyIPAddress(clientIP)
        self.database = database
        self.subprotocol = subprotocol
        self.tls = tls
    }
}
