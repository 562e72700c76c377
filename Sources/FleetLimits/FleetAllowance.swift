import Policy

/// One limit key's share of the fleet's bucket held by this relay: tokens drawn from Redis and
/// not spent yet (negative: spent ahead on credit, `onExceed: delay`), whether a draw is in
/// flight, and the local bucket used while Redis is away.
struct FleetAllowance {
    var tokens: Double = 0
    var drawing = false
    /// No draw before this (Redis said its bucket was empty until then).
    var retryAt: UInt64 = 0
    var lastUsed: UInt64
    var rate: Double
    var burst: Double
    /// `rate ÷ live relays` while Redis is away; made on first use in that mode.
    var fallback: TokenBucket?

    init(rate: Double, burst: Double, now: UInt64) {
        self.rate = rate
        self.burst = burst
        lastUsed = now
    }
}

/// What the shell is to ask Redis for one limit key: `want` tokens, giving `giveBack` unused
/// ones back first.
public struct FleetDraw: Sendable, Hashable {
    public var key: FleetBucketKey
    public var rate: Double
    public var burst: Double
    public var want: Int
    public var giveBack: Int
}

/// A limit key: the rule and which of its buckets (`messages|user:alice`).
public struct FleetBucketKey: Sendable, Hashable {
    public var rule: String
    public var bucket: String

    public init(rule: String, bucket: String) {
        self.rule = rule
        self.bucket = bucket
    }
}

/// The fleet limits' mode changed: the shell logs it once and sets the metric.
public enum FleetModeChange: Sendable, Equatable {
    /// Redis failed or was too slow: local limits of `limit ÷ liveRelays` from now on.
    case degraded(reason: String, liveRelays: Int)
    /// Redis answers again: shared limits from now on.
    case shared
}
