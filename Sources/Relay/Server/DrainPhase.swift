import NIOCore

/// A phase of a drain (``RelayServer/drain(timeout:)``), reported as ``RelayEvent/drain(_:)``
/// and logged as `event=drain phase=…`.
public enum DrainPhase: Sendable, Equatable, CustomStringConvertible {
    /// `/readyz` fails from now on; `liveSessions` get up to `timeout` to end by themselves.
    case started(liveSessions: Int, timeout: TimeAmount)
    /// The listener is closed: no new connection is accepted.
    case listenerClosed
    /// Every live session ended by itself before the timeout.
    case allEnded
    /// The timeout passed with `openSessions` still open: they are closed with 1001.
    case timedOut(openSessions: Int)
    /// ``RelayServer/stopDraining()`` ended the wait (a second SIGTERM, Ctrl-C): `openSessions`
    /// are closed with 1001.
    case stopped(openSessions: Int)
    /// Every session is closed, every capture and the pcap written out and closed.
    case done

    /// The `phase` field: `started`, `listener-closed`, `all-ended`, `timed-out`, `stopped`, `done`.
    public var name: String {
        switch self {
        case .started: "started"
        case .listenerClosed: "listener-closed"
        case .allEnded: "all-ended"
        case .timedOut: "timed-out"
        case .stopped: "stopped"
        case .done: "done"
        }
    }

    /// The sessions the phase speaks of, when it speaks of some.
    public var sessions: Int? {
        switch self {
        case .started(let live, _): live
        case .timedOut(let open), .stopped(let open): open
        case .listenerClosed, .allEnded, .done: nil
        }
    }

    public var description: String {
        switch self {
        case .started(let live, let timeout):
            "drain started, /readyz answers 503: \(live) live session(s) get up to \(Self.seconds(timeout)) s to end by themselves"
        case .listenerClosed: "listener closed, no new connection is accepted"
        case .allEnded: "every session ended by itself"
        case .timedOut(let open): "\(open) session(s) still open at the drain timeout: closed with 1001 (going away) to both sides"
        case .stopped(let open): "drain stopped at once: \(open) session(s) closed with 1001 (going away) to both sides"
        case .done: "drain done: every session closed, captures written and closed"
        }
    }

    private static func seconds(_ amount: TimeAmount) -> String {
        let value = Double(amount.nanoseconds) / 1e9
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}
