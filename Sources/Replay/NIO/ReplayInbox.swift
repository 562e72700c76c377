import BLIPCore
import NIOConcurrencyHelpers
import NIOCore

/// What reaches a running replay from its connection.
enum ReplayEvent: Sendable {
    /// The reply to scripted request `index`; nil when the connection closed before it came.
    case reply(index: Int, BLIPMessage?)
    /// The peer sent a request with this profile (already answered).
    case peerRequest(profile: String?)
    /// The connection closed; the peer's close code if it sent one.
    case closed(code: UInt16?)
}

/// A queue of ``ReplayEvent``s from event-loop callbacks to the replay's task, with a bounded
/// wait: ``next(timeout:)`` returns nil when nothing arrived in time.
final class ReplayInbox: Sendable {
    private struct State {
        var queue: [ReplayEvent] = []
        var waiter: (id: UInt64, continuation: CheckedContinuation<ReplayEvent?, Never>)?
        var nextWaiter: UInt64 = 0
        /// The pending wait's timer, cancelled when an event ends the wait first.
        var timer: Scheduled<Void>?
    }

    private let state = NIOLockedValueBox(State())
    private let eventLoop: EventLoop

    init(eventLoop: EventLoop) { self.eventLoop = eventLoop }

    func push(_ event: ReplayEvent) {
        let (waiter, timer) = state.withLockedValue { state -> (CheckedContinuation<ReplayEvent?, Never>?, Scheduled<Void>?) in
            if let waiter = state.waiter {
                defer { state.waiter = nil; state.timer = nil }
                return (waiter.continuation, state.timer)
            }
            state.queue.append(event)
            return (nil, nil)
        }
        timer?.cancel()
        waiter?.resume(returning: event)
    }

    /// The next event, or nil after `timeout` with none.
    func next(timeout: Duration) async -> ReplayEvent? {
        await withCheckedContinuation { continuation in
            let id: UInt64? = state.withLockedValue { state in
                if !state.queue.isEmpty {
                    continuation.resume(returning: state.queue.removeFirst())
                    return nil
                }
                state.nextWaiter += 1
                state.waiter = (state.nextWaiter, continuation)
                return state.nextWaiter
            }
            guard let id else { return }
            let nanoseconds = max(0, Int64(timeout.components.seconds) * 1_000_000_000
                                  + timeout.components.attoseconds / 1_000_000_000)
            let timer = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [state] in
                let expired: CheckedContinuation<ReplayEvent?, Never>? = state.withLockedValue { state in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    state.timer = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
            state.withLockedValue { state in
                if state.waiter?.id == id { state.timer = timer }
            }
        }
    }
}
