import BLIPCore
import Foundation
import Relay

/// Counts what passed through the demo's relay — sessions opened and closed, messages decoded
/// each way, refused handshakes — and lets the demo wait until a number of sessions has closed,
/// so each step's log lines are out before the next step starts.
final class SessionTally: RelayObserver, @unchecked Sendable {
    struct Counts: Sendable {
        var opened = 0
        var closed = 0
        var refused = 0
        /// Messages decoded, indexed by `BLIPDirection.rawValue` (client→upstream, upstream→client).
        var messages = [0, 0]
        var errorReplies = 0
    }

    let interests: RelayEventInterests = [.sessions, .messages]
    private let lock = NSLock()
    private var counts = Counts()
    private var waiters: [(closed: Int, continuation: CheckedContinuation<Void, Never>)] = []

    var snapshot: Counts { lock.withLock { counts } }

    func observe(_ event: RelayEvent) {
        var ready: [CheckedContinuation<Void, Never>] = []
        lock.withLock {
            switch event {
            case .sessionOpened: counts.opened += 1
            case .handshakeRefused: counts.refused += 1
            case .message(let message):
                counts.messages[message.direction.rawValue] += 1
                if message.message.type == .error { counts.errorReplies += 1 }
            case .sessionClosed:
                counts.closed += 1
                let closed = counts.closed
                ready = waiters.filter { $0.closed <= closed }.map(\.continuation)
                waiters.removeAll { $0.closed <= closed }
            default: break
            }
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `count` sessions have closed in all (the caller bounds the wait).
    func waitForClosedSessions(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done: Bool = lock.withLock {
                if counts.closed >= count { return true }
                waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
