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
    /// How long the last draw took (nanoseconds), which sizes the next batch.
    var roundTrip: UInt64 = 0
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
