import NIOCore

/// Tells when a session has been silent for its idle timeout (``RelayConfiguration/idleTimeout``),
/// without a clock read or a write promise per frame: traffic only sets ``sawTraffic``, and a timer
/// calls ``check()`` every ``checkInterval`` (a quarter of the timeout). Four quiet checks in a row
/// make the session idle, so it closes between 1 and 1.25 times the timeout after its last frame.
///
/// Traffic is any frame read on either hop and any bytes written to either (PING and PONG
/// included), the same as "no traffic in either direction".
struct IdleWatch {
    /// Quiet checks in a row that make a session idle.
    static let checksPerTimeout: Int64 = 4

    let checkInterval: TimeAmount
    /// Set by traffic; cleared by each ``check()``.
    var sawTraffic = false
    private var quietChecks: Int64 = 0

    init(timeout: TimeAmount) {
        checkInterval = .nanoseconds(max(1, timeout.nanoseconds / Self.checksPerTimeout))
    }

    /// One tick of the timer: true once the session has had ``checksPerTimeout`` quiet ticks in a row.
    mutating func check() -> Bool {
        if sawTraffic {
            sawTraffic = false
            quietChecks = 0
            return false
        }
        quietChecks += 1
        return quietChecks >= Self.checksPerTimeout
    }
}
