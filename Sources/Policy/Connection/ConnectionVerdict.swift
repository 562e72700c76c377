/// The answer to one handshake.
public enum ConnectionVerdict: Sendable, Equatable {
    case allow
    /// Refuse (or, when ``ConnectionRefusal/dryRun``, only log that a rule would have).
    case refuse(ConnectionRefusal)

    /// Whether the relay goes on with the session (allowed, or refused only in a dry run). Such
    /// a session has been counted and must be ended with ``ConnectionPolicy/sessionClosed(_:)``.
    public var admits: Bool {
        switch self {
        case .allow: true
        case .refuse(let refusal): refusal.dryRun
        }
    }
}

/// A refused handshake: an HTTP status Couchbase Lite understands (403 is final; 429 and 503
/// with `Retry-After` are retried later), the rule and why.
public struct ConnectionRefusal: Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    /// Seconds for the `Retry-After` header (429 and 503 only).
    public var retryAfter: Int?
    public var reason: String
    public var rule: String
    public var dryRun: Bool

    public init(status: Int, retryAfter: Int?, reason: String, rule: String, dryRun: Bool) {
        self.status = status
        self.retryAfter = retryAfter
        self.reason = reason
        self.rule = rule
        self.dryRun = dryRun
    }

    public var description: String {
        "connection rule \"\(rule)\" refuses with \(status)\(retryAfter.map { " (Retry-After \($0)s)" } ?? ""): \(reason)"
    }
}
