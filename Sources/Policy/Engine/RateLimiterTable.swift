/// Token buckets by (rule name, key value): one per session, user, client IP or one global
/// bucket, as the rule's `key` says. Not thread-safe by itself: ``PolicyState`` holds it under
/// its lock. Bounded: beyond ``maxEntries`` buckets, the idle ones (full again) are forgotten,
/// and if that is not enough, all are (clients then start with a full burst).
public struct RateLimiterTable: Sendable {
    public struct Key: Hashable, Sendable {
        public var rule: String
        /// Which bucket of the rule: `messages`/`bytes` and the key value.
        public var value: String

        public init(rule: String, value: String) {
            self.rule = rule
            self.value = value
        }
    }

    public let maxEntries: Int
    private var buckets: [Key: TokenBucket] = [:]

    public init(maxEntries: Int = 100_000) {
        self.maxEntries = maxEntries
    }

    public var count: Int { buckets.count }

    /// Runs `body` on the bucket for `key`, made full with these parameters on first use, or
    /// reconfigured to them (a reloaded rule).
    public mutating func withBucket<T>(_ key: Key, rate: Double, capacity: Double, now: UInt64,
                                       _ body: (inout TokenBucket) -> T) -> T {
        if buckets[key] == nil, buckets.count >= maxEntries { evict(now: now) }
        var bucket = buckets[key] ?? TokenBucket(rate: rate, capacity: capacity, now: now)
        bucket.reconfigure(rate: rate, capacity: capacity)
        let result = body(&bucket)
        buckets[key] = bucket
        return result
    }

    /// The bucket for `key`, if one exists (tests, reports).
    public func bucket(_ key: Key) -> TokenBucket? { buckets[key] }

    /// Forgets the buckets of rules not in `rules`.
    public mutating func retain(rules: Set<String>) {
        buckets = buckets.filter { rules.contains($0.key.rule) }
    }

    private mutating func evict(now: UInt64) {
        buckets = buckets.filter { !$0.value.isIdle(now: now) }
        if buckets.count >= maxEntries { buckets.removeAll(keepingCapacity: true) }
    }
}
