import Dispatch
import NIOConcurrencyHelpers

/// The policy's mutable state, shared by every event loop and kept across reloads for rules
/// whose name is unchanged: token buckets, how often each rule acted (`limit`), per-session
/// counters of counted closes, open-session counts, and the random source for `toxicity` and
/// delay ranges (injectable: tests pass a seeded generator). One lock; it is taken only when a
/// rule's cheap keys matched, never on the no-match path.
public final class PolicyState: Sendable {
    struct SessionRuleKey: Hashable {
        var rule: String
        var session: UInt64
    }

    struct CloseCounter {
        var messages = 0
        var bytes = 0
        var fired = false
    }

    struct Inner {
        var buckets: RateLimiterTable
        var applied: [String: Int] = [:]
        var closeCounters: [SessionRuleKey: CloseCounter] = [:]
        var sessions = SessionCounts()
        var random: any RandomNumberGenerator & Sendable

        /// Uniform in [0, 1).
        mutating func unit() -> Double { Double(random.next() >> 11) * 0x1p-53 }

        mutating func pick(_ range: DelayRange) -> UInt64 {
            range.max > range.min ? range.min + UInt64(unit() * Double(range.max - range.min)) : range.min
        }
    }

    private let inner: NIOLockedValueBox<Inner>
    /// The relay's share of the fleet's buckets (`--redis`); nil: `scope: fleet` limits are kept
    /// locally like the others (a store refuses such a policy, see ``PolicyStore``).
    public let fleet: (any FleetRateLimiting)?
    /// The fleet's session leases (`maxSessions` with `scope: fleet`), checked by the relay at
    /// the handshake after the local rules.
    public let fleetSessions: (any FleetSessionLimiting)?

    public init(random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), maxBuckets: Int = 100_000,
                fleet: (any FleetRateLimiting)? = nil, fleetSessions: (any FleetSessionLimiting)? = nil) {
        inner = NIOLockedValueBox(Inner(buckets: RateLimiterTable(maxEntries: maxBuckets), random: random))
        self.fleet = fleet
        self.fleetSessions = fleetSessions
    }

    func withLock<T>(_ body: (inout Inner) -> T) -> T { inner.withLockedValue(body) }

    /// How many times the message rule `rule` has acted.
    public func applied(rule: String) -> Int { withLock { $0.applied[rule] ?? 0 } }

    /// The token bucket of a rule for a key value, if it was used (tests, reports).
    public func bucket(_ key: RateLimiterTable.Key) -> TokenBucket? { withLock { $0.buckets.bucket(key) } }

    /// Sessions open now: in total, by user, by client IP.
    public var sessionCounts: SessionCounts { withLock { $0.sessions } }

    /// Forgets the state of rules that are gone (after a reload).
    func retain(messageRules: Set<String>, connectionRules: Set<String>) {
        withLock { state in
            state.buckets.retain(rules: messageRules.union(connectionRules.map(ConnectionPolicy.bucketName)))
            state.applied = state.applied.filter { messageRules.contains($0.key) }
            state.closeCounters = state.closeCounters.filter { messageRules.contains($0.key.rule) }
        }
    }

    func sessionEnded(_ id: UInt64) {
        withLock { state in state.closeCounters = state.closeCounters.filter { $0.key.session != id } }
    }
}

/// Open sessions counted at the handshake (``ConnectionPolicy/admit(_:now:)``) until
/// ``ConnectionPolicy/sessionClosed(_:)``.
public struct SessionCounts: Sendable, Equatable {
    public var total = 0
    public var perUser: [String: Int] = [:]
    public var perIP: [String: Int] = [:]

    mutating func open(user: String?, ip: String) {
        total += 1
        if let user { perUser[user, default: 0] += 1 }
        perIP[ip, default: 0] += 1
    }

    mutating func close(user: String?, ip: String) {
        total = max(0, total - 1)
        if let user { perUser[user] = (perUser[user] ?? 1) > 1 ? perUser[user]! - 1 : nil }
        perIP[ip] = (perIP[ip] ?? 1) > 1 ? perIP[ip]! - 1 : nil
    }
}

/// The monotonic clock the relay passes to the policy (nanoseconds); tests pass their own values.
public enum PolicyClock {
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
