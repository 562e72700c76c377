import Policy

/// The fleet limits' state machine, pure and synchronous (the shell ``FleetLimiter`` holds it
/// under a lock and carries out what it answers): per limit key an allowance of tokens drawn
/// from Redis in batches, the mode (shared, or degraded to local limits while Redis is away),
/// the live relays as last seen, and this relay's open fleet sessions per count.
///
/// A spend is answered from the allowance alone; when the allowance runs low the answer
/// carries a ``FleetDraw`` for the shell to send. While degraded no draw is made: each key is
/// limited by a local bucket of `rate ÷ liveRelays` (burst likewise, at least one token).
public struct FleetLimiterCore: Sendable {
    public let configuration: FleetLimitsConfiguration
    public private(set) var degraded = false
    /// When (the policy's clock) the failed call that began the fallback was sent, and from when
    /// failures count again after it ended.
    var degradedSince: UInt64 = 0
    var sharedSince: UInt64 = 0
    /// Live relays as Redis last listed them (this one included); 1 until the first heartbeat.
    public private(set) var liveRelays = 1
    var allowances: [FleetBucketKey: FleetAllowance] = [:]
    /// This relay's open sessions per fleet count (`rule|key`), for the local share while degraded.
    public internal(set) var openSessions: [String: Set<UInt64>] = [:]

    public init(configuration: FleetLimitsConfiguration) {
        self.configuration = configuration
    }

    /// Tokens this relay holds for `key` (tests, reports).
    public func tokens(_ key: FleetBucketKey) -> Double? { allowances[key]?.tokens }

    // MARK: spending

    /// Answers one spend from memory, and the draw to start if the allowance is running low.
    public mutating func spend(_ spend: FleetSpend, now: UInt64) -> (FleetSpendResult, FleetDraw?) {
        let key = FleetBucketKey(rule: spend.rule, bucket: spend.bucket)
        if allowances[key] == nil, allowances.count >= configuration.maxAllowances { evict(now: now) }
        var allowance = allowances[key] ?? FleetAllowance(rate: spend.rate, burst: spend.burst, now: now)
        defer { allowances[key] = allowance }
        allowance.rate = spend.rate
        allowance.burst = spend.burst
        allowance.lastUsed = now
        // A cost above the burst is charged as the burst, as a local bucket does.
        let cost = min(spend.cost, spend.burst)
        let result: FleetSpendResult
        if allowance.tokens >= cost {
            allowance.tokens -= cost
            result = .granted
        } else if degraded {
            result = Self.fallbackSpend(&allowance, cost: cost, onExceed: spend.onExceed, relays: liveRelays, now: now)
        } else if spend.onExceed == .delay {
            // On credit: the next draws pay the debt; the wait is the debt at this relay's share.
            allowance.tokens -= cost
            let share = spend.rate / Double(liveRelays)
            let wait = (-allowance.tokens / share * 1e9).rounded(.up)
            result = .wait(nanoseconds: wait < Double(UInt64(1) << 62) ? UInt64(wait) : UInt64(1) << 62)
        } else {
            result = .refused
        }
        return (result, degraded ? nil : startDraw(key, &allowance, now: now))
    }

    /// A draw for `key` when its allowance is below the refill mark and none is in flight.
    private func startDraw(_ key: FleetBucketKey, _ allowance: inout FleetAllowance, now: UInt64) -> FleetDraw? {
        let batch = configuration.batch(rate: allowance.rate, roundTrip: allowance.roundTrip)
        guard !allowance.drawing, now >= allowance.retryAt,
              allowance.tokens < Double(batch) * configuration.refillBelow else { return nil }
        allowance.drawing = true
        let debt = allowance.tokens < 0 ? Int((-allowance.tokens).rounded(.up)) : 0
        return FleetDraw(key: key, rate: allowance.rate, burst: allowance.burst, want: batch + debt, giveBack: 0)
    }

    private static func fallbackSpend(_ allowance: inout FleetAllowance, cost: Double, onExceed: RateLimit.OnExceed,
                                      relays: Int, now: UInt64) -> FleetSpendResult {
        let rate = allowance.rate / Double(relays)
        let capacity = max(1, allowance.burst / Double(relays))
        var bucket = allowance.fallback ?? TokenBucket(rate: rate, capacity: capacity, now: now)
        bucket.reconfigure(rate: rate, capacity: capacity)
        defer { allowance.fallback = bucket }
        switch onExceed {
        case .delay:
            let wait = bucket.reserve(cost, now: now)
            return wait == 0 ? .granted : .wait(nanoseconds: wait)
        case .deny:
            return bucket.take(cost, now: now) == 0 ? .granted : .refused
        }
    }

    // MARK: Redis's answers

    /// A draw came back after `roundTrip` nanoseconds: `granted` tokens, and when Redis's bucket
    /// will have more. (A draw sent
    /// before a fallback may come back during it: its tokens are kept, and only a heartbeat
    /// ends the fallback, so the mode changes once each way.)
    public mutating func drawn(_ draw: FleetDraw, granted: Int, retryAfterMilliseconds: Int, now: UInt64,
                               roundTrip: UInt64 = 0) {
        guard var allowance = allowances[draw.key] else { return }
        allowance.drawing = false
        allowance.roundTrip = roundTrip
        allowance.tokens += Double(granted)
        if granted < draw.want {
            allowance.retryAt = now + max(configuration.minRetry, UInt64(max(0, retryAfterMilliseconds)) * 1_000_000)
        }
        allowances[draw.key] = allowance
    }

    /// A draw sent at `sentAt` failed or timed out: the allowance keeps what it has; local
    /// limits from now on.
    public mutating func drawFailed(_ draw: FleetDraw, reason: String, sentAt: UInt64) -> FleetModeChange? {
        allowances[draw.key]?.drawing = false
        return enterDegraded(reason: reason, sentAt: sentAt)
    }

    /// A heartbeat sent at `sentAt` listed `live` relays. Only an answer to a call sent after
    /// the fallback began ends it: one that was on its way when Redis went does not.
    public mutating func heartbeat(liveRelays live: Int, sentAt: UInt64) -> FleetModeChange? {
        liveRelays = max(1, live)
        guard degraded, sentAt > degradedSince else { return nil }
        return leaveDegraded(sentAt: sentAt)
    }

    /// A Redis call sent at `sentAt` failed or timed out.
    public mutating func redisFailed(reason: String, sentAt: UInt64) -> FleetModeChange? {
        enterDegraded(reason: reason, sentAt: sentAt)
    }

    /// A failure of a call sent before the last return to shared limits is old news.
    private mutating func enterDegraded(reason: String, sentAt: UInt64) -> FleetModeChange? {
        guard !degraded, sentAt >= sharedSince else { return nil }
        degraded = true
        degradedSince = sentAt
        for key in allowances.keys { allowances[key]?.fallback = nil }
        return .degraded(reason: reason, liveRelays: liveRelays)
    }

    private mutating func leaveDegraded(sentAt: UInt64) -> FleetModeChange? {
        degraded = false
        sharedSince = sentAt
        for key in allowances.keys { allowances[key]?.retryAt = 0 }
        return .shared
    }

    // MARK: upkeep

    /// At each heartbeat: the unspent tokens of keys idle for ``FleetLimitsConfiguration/idleReturn``
    /// go back to Redis (nothing while degraded), and keys with nothing left are forgotten.
    public mutating func sweep(now: UInt64) -> [FleetDraw] {
        guard !degraded else { return [] }
        var returns: [FleetDraw] = []
        for (key, allowance) in allowances where !allowance.drawing && now >= allowance.lastUsed + configuration.idleReturn {
            let unused = Int(allowance.tokens.rounded(.down))
            if unused >= 1 {
                returns.append(FleetDraw(key: key, rate: allowance.rate, burst: allowance.burst, want: 0, giveBack: unused))
            }
            if allowance.tokens >= 0 { allowances[key] = nil }
        }
        return returns
    }

    private mutating func evict(now: UInt64) {
        allowances = allowances.filter { $0.value.drawing || now < $0.value.lastUsed + configuration.idleReturn }
        if allowances.count >= configuration.maxAllowances { allowances = allowances.filter { $0.value.drawing } }
    }
}
