import BLIPCore
/// What a message rule does to the messages it matches, as written in the policy file (see
/// docs/policy.md and `samples/policy.yaml` for the YAML of each).
public enum PolicyAction: Sendable {
    /// The sender gets an ERR reply; the other side never sees the message. A denied noreply
    /// request is dropped silently. `readOnly` is parsed into a deny of the client's push.
    case deny(ErrorReply)
    /// Entries whose document ID matches are removed from `changes`/`proposeChanges` bodies and
    /// answered to their sender as not wanted.
    case filterChanges(doc: TextPattern)
    /// Hold the message back (fixed, or uniformly random in a range); later requests in the same
    /// direction wait behind it.
    case delay(DelayRange)
    /// Token buckets on messages/s and/or bytes/s.
    case rateLimit(RateLimit)
    /// Fault: answer the request with this error instead of forwarding it.
    case errorReply(ErrorReply)
    /// Fault: close the WebSocket.
    case close(CloseFault)
    /// Fault: do not pass on ACKs for the matching messages for this long (nanoseconds).
    case withholdAcks(nanoseconds: UInt64)
    /// Fault: hold the reply to each matching request back by this much.
    case replyLatency(DelayRange)
    /// Fault: forward the matching messages no faster than this.
    case bandwidth(bytesPerSecond: Int)

    /// The action's key in the file.
    public var name: String {
        switch self {
        case .deny: "deny"
        case .filterChanges: "filterChanges"
        case .delay: "delay"
        case .rateLimit: "rateLimit"
        case .errorReply: "errorReply"
        case .close: "close"
        case .withholdAcks: "withholdAcks"
        case .replyLatency: "replyLatency"
        case .bandwidth: "bandwidth"
        }
    }
}

/// A delay in nanoseconds: fixed when `min == max`, else drawn uniformly from `min...max`.
public struct DelayRange: Sendable, Equatable {
    public var min: UInt64
    public var max: UInt64

    public init(min: UInt64, max: UInt64) {
        self.min = min
        self.max = max
    }

    public static func fixed(_ nanoseconds: UInt64) -> DelayRange { DelayRange(min: nanoseconds, max: nanoseconds) }
}

/// `rateLimit:` — messages/s (`perSecond`, `burst`) and/or bytes/s (`bytesPerSecond`,
/// `burstBytes`), one bucket pair per value of `key`.
public struct RateLimit: Sendable, Equatable {
    public enum Key: String, Sendable, CaseIterable {
        case session, user, clientIP, global
    }

    public enum OnExceed: String, Sendable, CaseIterable {
        /// Hold the message until the bucket has the tokens (keeps order in that direction).
        case delay
        /// Refuse it with HTTP 429.
        case deny
    }

    public var perSecond: Double?
    public var burst: Double
    public var bytesPerSecond: Double?
    public var burstBytes: Double
    public var key: Key
    public var onExceed: OnExceed
    /// `local`: each relay keeps its own buckets; `fleet`: the relays share them in Redis.
    public var scope: LimitScope = .local
}

/// `close:` — the close code (1001 going away, 1006 abrupt TCP drop without a CLOSE frame, 1011
/// server error, 4001/4002 application codes Couchbase Lite reads as retryable/fatal errors;
/// wire-format reference §7) and when: after the session's `afterMessages`-th matching message or
/// once `afterBytes` matching body bytes have passed (both counted per session), else on the
/// first match.
public struct CloseFault: Sendable, Equatable {
    public static let allowedCodes: [UInt16] = [1001, 1006, 1011, 4001, 4002]

    public var code: UInt16
    public var reason: String
    public var afterMessages: Int?
    public var afterBytes: Int?

    /// True when the close waits for a count (the message that reaches it is forwarded first).
    public var isCounted: Bool { afterMessages != nil || afterBytes != nil }
}
