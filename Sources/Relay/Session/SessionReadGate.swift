import NIOConcurrencyHelpers
import NIOCore

/// Lets one observer stop a session's reading from both peers and start it again: the capture's
/// back-pressure when the disk does not keep up (ARCHITECTURE.md "Observers").
///
/// - ``hold()`` and ``release()`` may be called from any thread; they take effect on the
///   session's event loop. Frames already read when the hold lands are still delivered (at most
///   one read's worth per peer); no new read is issued until the last holder releases.
/// - Holding is idempotent per gate: a second ``hold()`` before ``release()`` does nothing.
/// - A gate outliving its session does nothing.
public final class SessionReadGate: Sendable {
    private let eventLoop: EventLoop
    /// Touched only on `eventLoop`.
    private let session: NIOLoopBound<Weak>
    private let held = NIOLockedValueBox(false)

    private final class Weak { weak var session: RelaySession?; init(_ session: RelaySession) { self.session = session } }

    init(session: RelaySession) {
        eventLoop = session.eventLoop
        self.session = NIOLoopBound(Weak(session), eventLoop: session.eventLoop)
    }

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
