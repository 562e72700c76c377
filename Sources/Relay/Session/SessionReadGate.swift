import NIOConcurrencyHelpers
import NIOCore

/// Lets one observer stop a session's reading from both peers and start it again: the capture's
/// back-pressure when the disk does not keep up (ARCHITECTURE.md "Observers").
///
/// - ``hold()`` and ``release()`` may be called from any thread; they take effect on the
///   session's event loop. Frames already read when the hold lands are still delivered (at most
///   one read's worth per peer); no new read is issued until the last holder releases.
/// - Holding is idempotent per gate: a second ``hold()`` before ``release()`` does nothing.
/// - A gate outliving its session does nothing: the session lets go of it when it finishes
///   (``detach()``).
public final class SessionReadGate: Sendable {
    /// The session's.
    let eventLoop: EventLoop
    /// Touched only on `eventLoop`.
    private let session: NIOLoopBound<Target>
    private let held = NIOLockedValueBox(false)

    /// The session the gate acts on, until it finishes. A strong reference, not a weak one: a
    /// weak reference gives its object a side table, and every retain and release of the session
    /// (its hops take one per read and per read batch) then goes through the runtime's slow path
    /// (1.3 % of the relay's CPU on `bench relay --goblip` A on the Intel Xeon). It keeps nothing
    /// alive longer: the server holds every session until it finishes.
    private final class Target { var session: RelaySession?; init(_ session: RelaySession) { self.session = session } }

    init(session: RelaySession) {
        eventLoop = session.eventLoop
        self.session = NIOLoopBound(Target(session), eventLoop: session.eventLoop)
    }

    /// The session finished: from now on the gate does nothing and no longer holds it. On the
    /// session's event loop.
    func detach() {
        session.value.session = nil
    }

    /// The session the gate acts on (nil once it finished). On the session's event loop.
    var target: RelaySession? { session.value.session }

    /// Whether this gate now holds the session's reading.
    public var isHeld: Bool { held.withLockedValue { $0 } }

    /// Stops reading from both peers.
    public func hold() {
        guard held.withLockedValue({ (held: inout Bool) -> Bool in defer { held = true }; return !held }) else { return }
        onLoop { $0.holdReading() }
    }

    /// Lets the session read again (once no other gate holds it).
    public func release() {
        guard held.withLockedValue({ (held: inout Bool) -> Bool in defer { held = false }; return held }) else { return }
        onLoop { $0.releaseReading() }
    }

    private func onLoop(_ body: @escaping @Sendable (RelaySession) -> Void) {
        let bound = session
        if eventLoop.inEventLoop {
            if let session = bound.value.session { body(session) }
        } else {
            eventLoop.execute { if let session = bound.value.session { body(session) } }
        }
    }
}
