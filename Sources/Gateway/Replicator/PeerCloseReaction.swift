/// How the active replicator reads the end of a connection it did not ask for, as Couchbase Lite's
/// replicator does (wire-format reference §7 "How LC reacts to a close it receives"):
///
/// - 1000 or 1001 from the peer while replicating: the peer is going away (LC reports 1001).
/// - 1006 (TCP dropped without CLOSE), 4001 (app transient) and the HTTP statuses 408, 429,
///   502, 503, 504: transient; LC retries with backoff.
/// - Any other close code or HTTP status: permanent; LC stops with the error.
///
/// Pure classification; the replicator here does not retry by itself, it reports the reaction
/// (``GatewayError/closeReaction``) for its caller to act on.
public enum PeerCloseReaction: String, Sendable, Equatable, CaseIterable {
    case goingAway
    case transient
    case permanent

    /// The reaction to a WebSocket close code received while the replication was running.
    public init(closeCode: UInt16) {
        switch closeCode {
        case 1000, 1001: self = .goingAway
        case 1006, 4001: self = .transient
        default: self = .permanent
        }
    }

    /// The reaction to an HTTP status (a refused handshake, or an HTTP-domain error ending the run).
    public init(httpStatus: Int) {
        self = Self.transientHTTPStatuses.contains(httpStatus) ? .transient : .permanent
    }

    /// HTTP statuses LC retries later (§7).
    public static let transientHTTPStatuses: Set<Int> = [408, 429, 502, 503, 504]

    /// LC retries a transient end with backoff; going away also ends in a retry for a continuous
    /// replication, never for a permanent one.
    public var isRetried: Bool { self != .permanent }
}
