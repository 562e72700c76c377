import NIOConcurrencyHelpers

/// Things that happened, in order, with a bounded wait for the first one (past or future) that
/// matches a predicate on its position and value.
final class EventLog<Element: Sendable>: Sendable {
    typealias Predicate = @Sendable (Int, Element) -> Bool

    private struct Waiter {
        var id: UInt64
        var predicate: Predicate
        var continuation: CheckedContinuation<Element?, Never>
    }
    private struct State {
        var elements: [Element] = []
        var waiters: [Waiter] = []
    }
    private let state = NIOLockedValueBox(State())

    func append(_ element: Element) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Element?, Never>] in
            let position = state.elements.count
            state.elements.append(element)
            var ready: [CheckedContinuation<Element?, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(position, element) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: element) }
    }

    var all: [Element] { state.withLockedValue { $0.elements } }

    /// The first element matching `predicate`; throws ``TimeoutError`` after `seconds` without one.
    func first(within seconds: Double = 60, where predicate: @escaping Predicate) async throws -> Element {
        let id = UInt64.random(in: 0...UInt64.max)
        let element: Element? = await withCheckedContinuation { continuation in
            let existing = state.withLockedValue { state -> Element? in
                if let match = state.elements.enumerated().first(where: { predicate($0.offset, $0.element) }) {
                    return match.element
                }
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return nil
            }
            if let existing { continuation.resume(returning: existing); return }
            Task {
                try? await Task.sleep(for: .seconds(seconds))  // the bound, not a synchronization
                let expired = self.state.withLockedValue { state -> CheckedContinuation<Element?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
        }
        guard let element else { throw TimeoutError() }
        return element
    }
}
