/// A token bucket: holds at most `capacity` tokens, refilled at `rate` tokens per second, and
/// starts full. Time is passed in (nanoseconds on any monotonic clock), so tests drive it with a
/// fake clock and the relay with its event loop's.
///
/// Two ways to spend: ``take(_:now:)`` spends only what is there (deny on exceed, handshake
/// rate), ``reserve(_:now:)`` always spends and may go into debt, returning how long the caller
/// must wait: later callers queue behind earlier ones, which keeps delayed requests in order.
/// A cost above the capacity is charged as the capacity (a message larger than the burst would
/// otherwise never pass).
public struct TokenBucket: Sendable, Equatable {
    public private(set) var rate: Double
    public private(set) var capacity: Double
    public private(set) var tokens: Double
    private var updated: UInt64

    public init(rate: Double, capacity: Double, now: UInt64) {
        precondition(rate > 0 && capacity > 0, "a token bucket needs a positive rate and capacity")
        self.rate = rate
        self.capacity = capacity
        tokens = capacity
        updated = now
    }

    /// Adopts new parameters (a reloaded rule), keeping the tokens it has (at most the new capacity).
    public mutating func reconfigure(rate: Double, capacity: Double) {
        guard rate != self.rate || capacity != self.capacity else { return }
        self.rate = rate
        self.capacity = capacity
        tokens = min(tokens, capacity)
    }

    /// Adds what accrued since the last call; a clock that went backwards adds nothing.
    public mutating func refill(now: UInt64) {
        guard now > updated else { return }
        tokens = min(capacity, tokens + Double(now - updated) * rate / 1e9)
        updated = now
    }

    /// Spends `cost` tokens if the bucket has them: returns 0. Otherwise spends nothing and
    /// returns the nanoseconds until it would have them.
    public mutating func take(_ cost: Double, now: UInt64) -> UInt64 {
        refill(now: now)
        let cost = min(cost, capacity)
        if tokens >= cost {
            tokens -= cost
            return 0
        }
        return waitNanoseconds(for: cost - tokens)
    }

    /// Spends `cost` tokens now, going into debt if needed, and returns the nanoseconds the
    /// caller must wait before its spending is covered (0 when it was).
    public mutating func reserve(_ cost: Double, now: UInt64) -> UInt64 {
        refill(now: now)
        tokens -= min(cost, capacity)
        return tokens >= 0 ? 0 : waitNanoseconds(for: -tokens)
    }

    /// True when nothing is owed and the bucket is full again (its state can be forgotten).
    public func isIdle(now: UInt64) -> Bool {
        now >= updated && tokens + Double(now - updated) * rate / 1e9 >= capacity
    }

    /// The longest wait a bucket answers (2^62 ns, ~146 years): a tiny rate (`perSecond: 1e-300`
    /// is positive, so valid) makes the exact wait too large for a UInt64, or infinite.
    static let maxWait: UInt64 = 1 << 62

    private func waitNanoseconds(for missing: Double) -> UInt64 {
        let wait = (missing / rate * 1e9).rounded(.up)
        return wait < Double(Self.maxWait) ? UInt64(wait) : Self.maxWait
    }
}
