/// Who a recorded session belongs to, fixed when it opens: what the sessions view lists.
public struct SessionDescription: Sendable, Equatable {
    public var id: UInt64
    public var clientAddress: String
    /// The user name (never a password or a cookie's value); nil when anonymous or unknown.
    public var user: String?
    public var database: String
    public var upstream: String
    /// The Sync Gateway node (`host:port`) that serves the session, when the relay picked one.
    public var node: String?
    public var subprotocol: String?
    /// Seconds since 1970 (UTC) when the session opened.
    public var startedWallClock: Double
    /// Where it came from when it was read from files (`blipscope web`): the capture's name.
    public var source: String?
    /// Sync Gateway's context ID for the replication (its 101's `X-Correlation-ID`, `c:[ID]` in its log).
    public var correlationID: String?

    public init(id: UInt64, clientAddress: String, user: String?, database: String, upstream: String,
                subprotocol: String?, startedWallClock: Double, source: String? = nil, correlationID: String? = nil,
                node: String? = nil) {
        self.correlationID = correlationID
        self.node = node
        self.id = id
        self.clientAddress = clientAddress
        self.user = user
        self.database = database
        self.upstream = upstream
        self.subprotocol = subprotocol
        self.startedWallClock = startedWallClock
        self.source = source
    }
}
