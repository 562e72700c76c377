/// One fleet-wide session count a handshake must fit in: a `maxSessions` rule with
/// `scope: fleet` that matched it, for one of its keys (`total`, `user:alice`, `ip:10.0.0.7`).
public struct FleetSessionClaim: Sendable, Equatable {
    public var rule: String
    /// Which count: `total`, `user:NAME` or `ip:ADDRESS`.
    public var key: String
    public var limit: Int
    /// The refusal when the count is full: the rule's status, Retry-After and a reason.
    public var refusal: ConnectionRefusal

    public init(rule: String, key: String, limit: Int, refusal: ConnectionRefusal) {
        self.rule = rule
        self.key = key
        self.limit = limit
        self.refusal = refusal
    }
}
