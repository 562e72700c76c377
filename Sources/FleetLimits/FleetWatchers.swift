import NIOConcurrencyHelpers

/// Tasks waiting for the fleet limits' state to reach a condition (tests, the relay's start):
/// each is checked again at every change, and given up at its timeout.
final class FleetWatchers: Sendable {
    private struct Watcher {
        var id: Int
        var predicate: @Sendable (FleetSnapshot) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var next = 0
        var watchers: [Watcher] = []
        /// Waits begun and not registered yet, and those of them whose timeout already fired.
        var unregistered: Set<Int> = []
        var expired: Set<Int> = []
    }

    private let state = NIOLockedValueBox(State())

    func notify(_ snapshot: FleetSnapshot) {
        let ready = state.withLockedValue { state -> [Watcher] in
            let ready = state.watchers.filter { $0.predicate(snapshot) }
            state.watchers.removeAll { $0.predicate(snapshot) }
            return ready
        }
        for watcher in ready { watcher.continuation.resume(returning: true) }
    }

    func wait(within timeout: Duration, current: @Sendable () -> FleetSnapshot,
              until predicate: @escaping @Sendable (FleetSnapshot) -> Bool) async -> Bool {
        if predicate(current()) { return true }
        let id = state.withLockedValue { state -> Int in
            state.next += 1
            state.unregistered.insert(state.next)
            return state.next
        }
        let expiry = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.expire(id)
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { continuation in
            let late = state.withLockedValue { state -> Bool in
                if state.expired.remove(id) != nil { return true }
                state.unregistered.remove(id)
                state.watchers.append(Watcher(id: id, predicate: predicate, continuation: continuation))
                return false
            }
            if late { continuation.resume(returning: false) } else { notify(current()) }
        }
    }

    private func expire(_ id: Int) {
        let gone = state.withLockedValue { state -> Watcher? in
            guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
                if state.unregistered.remove(id) != nil { state.expired.insert(id) }
                return nil
            }
            return state.watchers.remove(at: index)
        }
        gone?.continuation.resume(returning: false)
    }
}
