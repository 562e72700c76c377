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
