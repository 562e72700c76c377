import NIOConcurrencyHelpers

/// The run's shared counters: the message budget the slots draw sessions from, messages echoed
/// so far, and the tallies of finished sessions. Safe from any thread.
final class SoakProgress: Sendable {
    private struct State {
        var budgetLeft: Int
        var sessionsStarted = 0
        var echoed = 0
        var totals = SessionTally()
        var warmUpTaken = false
        var budgetSpent = false
    }

    private let state: NIOLockedValueBox<State>
    private let warmUpAt: Int

    init(messages: Int, warmUpShare: Double) {
        state = NIOLockedValueBox(State(budgetLeft: messages))
        warmUpAt = max(1, Int(Double(messages) * warmUpShare))
    }

    /// The next session to run: its index (for its seed and kind) and up to `wanted` messages of
    /// the budget (with the message count `wanted` for that index); nil once the budget is spent.
    func nextSession(wanted: (Int) -> Int) -> (index: Int, messages: Int)? {
        state.withLockedValue { state in
            guard state.budgetLeft > 0 else { return nil }
            let index = state.sessionsStarted
            state.sessionsStarted += 1
            let messages = min(state.budgetLeft, wanted(index))
            state.budgetLeft -= messages
            return (index, messages)
        }
    }

    /// Marks the budget spent; true for the first caller only.
    func markBudgetSpent() -> Bool {
        state.withLockedValue { state in
            defer { state.budgetSpent = true }
            return !state.budgetSpent
        }
    }

    /// Counts one echoed message; true once, when the warm-up share has just been reached.
    func echoedOne() -> Bool {
        state.withLockedValue { state in
            state.echoed += 1
            guard !state.warmUpTaken, state.echoed >= warmUpAt else { return false }
            state.warmUpTaken = true
            return true
        }
    }

    func finished(_ tally: SessionTally) {
        state.withLockedValue { $0.totals = $0.totals + tally }
    }

    var echoed: Int { state.withLockedValue { $0.echoed } }
    var totals: SessionTally { state.withLockedValue { $0.totals } }
}
