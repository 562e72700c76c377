/// One spend a `scope: fleet` rate limit asks of the relay's share of the fleet's bucket: the
/// rule, which of its buckets (`messages|user:alice`), the rule's rate and burst, and the cost.
public struct FleetSpend: Sendable, Hashable {
    public var rule: String
    public var bucket: String
    public var rate: Double
    public var burst: Double
    public var cost: Double
    public var onExceed: RateLimit.OnExceed

    public init(rule: String, bucket: String, rate: Double, burst: Double, cost: Double, onExceed: RateLimit.OnExceed) {
        self.rule = rule
        self.bucket = bucket
        self.rate = rate
        self.burst = burst
        self.cost = cost
        self.onExceed = onExceed
    }
}

/// What the relay's fleet allowance answers a spend: covered now, covered after a wait (the
/// message is delayed, `onExceed: delay`), or not covered (refused with 429, `onExceed: deny`).
public enum FleetSpendResult: Sendable, Equatable {
    case granted
    case wait(nanoseconds: UInt64)
    case refused
}

/// The relay's allowances of `scope: fleet` rate limits (the FleetLimits module). Called per
/// message under the policy's lock: it must answer from memory at once, never wait on Redis.
public protocol FleetRateLimiting: Sendable {
    func spend(_ spend: FleetSpend, now: UInt64) -> FleetSpendResult
}
