/// Whether the relay should be sent new clients: `GET /readyz`, a load balancer's health check
/// (HAProxy's `option httpchk`). Ready when no condition holds against it; each condition that
/// does adds its reason, and `/readyz` answers 503 with them, one a line. A new condition is a
/// new ``Reason`` and one ``fail(_:)`` where it is known.
public struct Readiness: Sendable, Equatable {
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The relay's listener is not bound (not started, or closed).
        case notListening
        /// A drain began (``RelayServer/drain(timeout:)``): the relay takes no new session.
        case draining
        /// A route has no healthy Sync Gateway node (``UpstreamReadiness``): the pool's sentence.
        case upstream(String)

        public var description: String {
            switch self {
            case .notListening: "relay not listening"
            case .draining: "relay draining: no new session is accepted"
            case .upstream(let reason): reason
            }
        }
    }

    public private(set) var reasons: [Reason] = []

    /// From what the relay says of itself: listening, and whether it drains.
    public init(listening: Bool, draining: Bool) {
        if !listening { fail(.notListening) }
        if draining { fail(.draining) }
    }

    public var isReady: Bool { reasons.isEmpty }

    public mutating func fail(_ reason: Reason) { reasons.append(reason) }

    /// The body of `/readyz`: `ok`, or each reason on a line of its own.
    public var text: String { isReady ? "ok\n" : reasons.map { "\($0)\n" }.joined() }
}
