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
