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

/// The fleet's session leases (the FleetLimits module): the relay asks once per handshake that
/// matched a fleet `maxSessions` rule, and releases at the session's end. Never waits longer
/// than its Redis timeout; without Redis it decides from a local share of each limit.
public protocol FleetSessionLimiting: Sendable {
    /// Takes a lease in every claim's count for `session`, or none: the first claim whose
    /// count is full is the refusal (its leases taken so far are given back).
    func open(_ claims: [FleetSessionClaim], session: UInt64) async -> ConnectionRefusal?
    /// Gives back the leases ``open(_:session:)`` took for `session`.
    func close(_ claims: [FleetSessionClaim], session: UInt64)
}

extension ConnectionPolicy {
    /// The fleet-wide counts a handshake the local rules admitted must also fit in: each
    /// `maxSessions` rule with `scope: fleet` whose match fits, for each of its limits that
    /// applies (an anonymous client is not counted per user). Empty without a fleet.
    public func fleetSessionClaims(_ facts: HandshakeFacts) -> [FleetSessionClaim] {
        guard state.fleetSessions != nil else { return [] }
        var claims: [FleetSessionClaim] = []
        for rule in rules where rule.match.matches(facts) {
            guard case .maxSessions(let limits) = rule.action, limits.scope == .fleet else { continue }
            func claim(_ key: String, _ limit: Int, _ reason: String) {
                let refusal = ConnectionRefusal(status: limits.status, retryAfter: limits.retryAfter, reason: reason,
                                                rule: rule.name, dryRun: dryRun || rule.dryRun)
                claims.append(FleetSessionClaim(rule: rule.name, key: key, limit: limit, refusal: refusal))
            }
            if let total = limits.total { claim("total", total, "\(total) sessions open across the fleet (limit)") }
            if let perUser = limits.perUser, let user = facts.user {
                claim("user:" + user, perUser, "user has \(perUser) sessions open across the fleet (limit)")
            }
            if let perIP = limits.perIP {
                claim("ip:" + facts.clientIP, perIP, "client address has \(perIP) sessions open across the fleet (limit)")
            }
        }
        return claims
    }
}
