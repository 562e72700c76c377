/// The bounds and timings of the relay's fleet limits (docs/redis.md states the error each one
/// allows). Times are nanoseconds on the policy's monotonic clock.
public struct FleetLimitsConfiguration: Sendable, Hashable {
    /// Seconds of a limit's rate one draw from Redis asks for: a batch is `rate × batchWindow`
    /// tokens, at least 1 and at most ``maxBatch``. 100 ms: at most ten Redis calls per second
    /// per limit key and relay, and at most a tenth of a second's tokens held unused by a relay
    /// (the error bound in docs/redis.md; Kong's `sync_rate` makes the same trade).
    public var batchWindow: Double
    /// The most tokens one draw asks for, whatever the rate (bounds what a relay holds).
    public var maxBatch: Int
    /// A draw starts when a relay's allowance falls below this fraction of a batch, so the next
    /// batch is usually in before the allowance is empty.
    public var refillBelow: Double
    /// The shortest wait before drawing again after Redis had no token to give.
    public var minRetry: UInt64
    /// Tokens a relay held but has not spent for this long are given back to Redis.
    public var idleReturn: UInt64
    /// How often the relay tells Redis it is alive (and renews its session leases).
    public var heartbeatInterval: UInt64
    /// A relay that has not heartbeaten for this long no longer counts as live (3 heartbeats).
    public var relayTTL: UInt64
    /// A fleet session's lease: a relay that died stops renewing, and its sessions stop counting
    /// after this long.
    public var sessionLease: UInt64
    /// The longest a Redis command may take before the relay falls back to local limits: the
    /// Redis client's command timeout. 250 ms: a handshake that asks the fleet is never held
    /// longer, and a slow Redis is noticed within a quarter second.
    public var redisTimeout: UInt64
    /// Most limit keys (rule and key value) a relay keeps an allowance for: beyond it the idle
    /// ones are forgotten (their tokens expire in Redis), then all that are not drawing.
    public var maxAllowances: Int
    /// Prefix of every key the relay writes in Redis.
    public var keyPrefix: String
    /// This relay's name in the fleet's list of live relays.
    public var relayID: String

    public init(batchWindow: Double = 0.1, maxBatch: Int = 1_000, refillBelow: Double = 0.5,
                minRetry: UInt64 = 5_000_000, idleReturn: UInt64 = 1_000_000_000,
                heartbeatInterval: UInt64 = 1_000_000_000, relayTTL: UInt64 = 3_000_000_000,
                sessionLease: UInt64 = 15_000_000_000, redisTimeout: UInt64 = 250_000_000,
                maxAllowances: Int = 100_000, keyPrefix: String = "blipscope:", relayID: String) {
        self.batchWindow = batchWindow
        self.maxBatch = maxBatch
        self.refillBelow = refillBelow
        self.minRetry = minRetry
        self.idleReturn = idleReturn
        self.heartbeatInterval = heartbeatInterval
        self.relayTTL = relayTTL
        self.sessionLease = sessionLease
        self.redisTimeout = redisTimeout
        self.maxAllowances = maxAllowances
        self.keyPrefix = keyPrefix
        self.relayID = relayID
    }

    /// The tokens one draw asks for at `rate` tokens per second, when the last draw took
    /// `roundTrip` nanoseconds: a batch covers ``batchWindow`` or twice the round trip, whichever
    /// is longer, so a Redis slowed down still hands each relay enough to go on between draws
    /// (the tokens held, and the error bound with them, grow with the round trip).
    public func batch(rate: Double, roundTrip: UInt64 = 0) -> Int {
        let tokens = (rate * max(batchWindow, 2 * Double(roundTrip) / 1e9)).rounded(.up)
        guard tokens.isFinite, tokens >= 1 else { return 1 }
        return tokens >= Double(maxBatch) ? maxBatch : Int(tokens)
    }
}
