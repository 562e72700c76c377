import Policy

extension FleetLimiterCore {
    /// The name of a claim's count, here and (after the prefix) in Redis: `rule:key`.
    public static func count(_ claim: FleetSessionClaim) -> String { claim.rule + ":" + claim.key }

    /// While degraded: the first claim whose local share (`limit ÷ live relays`, at least 1) this
    /// relay's open sessions already fill.
    public func localRefusal(_ claims: [FleetSessionClaim]) -> ConnectionRefusal? {
        for claim in claims {
            let share = max(1, claim.limit / liveRelays)
            if openSessions[Self.count(claim), default: []].count >= share { return claim.refusal }
        }
        return nil
    }

    /// `session` holds a lease in each claim's count.
    public mutating func opened(_ claims: [FleetSessionClaim], session: UInt64) {
        for claim in claims { openSessions[Self.count(claim), default: []].insert(session) }
    }

    /// `session` gave its leases back.
    public mutating func closed(_ claims: [FleetSessionClaim], session: UInt64) {
        for claim in claims {
            let count = Self.count(claim)
            openSessions[count]?.remove(session)
            if openSessions[count]?.isEmpty == true { openSessions[count] = nil }
        }
    }
}
