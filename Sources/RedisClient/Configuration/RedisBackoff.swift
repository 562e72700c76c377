import NIOCore

/// How long the client waits before connecting again: after a dropped connection
/// ``initialDelay``, after each failed attempt twice as long as before, never more than
/// ``maxDelay``; each wait is drawn between half and all of that, so a fleet of relays that lost
/// the same server does not come back at the same instant.
public struct RedisBackoff: Sendable, Hashable {
    /// The wait before the first attempt after a drop or a failure.
    public var initialDelay: TimeAmount
    /// The longest wait between two attempts.
    public var maxDelay: TimeAmount

    public init(initialDelay: TimeAmount = .milliseconds(100), maxDelay: TimeAmount = .seconds(5)) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
    }

    public static let `default` = RedisBackoff()

    /// The wait before attempt `failures + 1` after `failures` failed attempts in a row;
    /// `jitter`, in 0...1, picks where between half and all of the full delay it falls.
    public func delay(afterFailures failures: Int, jitter: Double) -> TimeAmount {
        let initial = max(initialDelay.nanoseconds, 1)
        let ceiling = max(maxDelay.nanoseconds, initial)
        var full = initial
        for _ in 0..<min(max(failures, 0), 62) where full < ceiling {
            full = full > ceiling / 2 ? ceiling : full * 2
        }
        full = min(full, ceiling)
        let fraction = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return .nanoseconds(max(1, Int64(Double(full) * fraction)))
    }
}
