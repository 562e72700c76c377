import Replication

/// The arithmetic behind the ``MetricNames/stuckSessions`` gauge: which live sessions are stuck
/// for which reasons, and per reason how many sessions. Pure; ``MetricsObserver`` keeps one
/// under its lock and sets the meters of the reasons an update changed.
///
/// A session's reasons come from two sources, kept apart because they change at different
/// times: its standing findings (a 409 loop), which the session's messages raise and end as they
/// pass, and the timed rules (requests past their timeouts), which only a poll with a clock sees.
/// A session counts once per reason, whatever the number of findings of that kind.
struct StuckSessions {
    private struct Reasons {
        var standing: Set<Finding.Kind> = []
        var timed: Set<Finding.Kind> = []
        var all: Set<Finding.Kind> { standing.union(timed) }
    }

    private var sessions: [UInt64: Reasons] = [:]
    private(set) var counts: [Finding.Kind: Int] = [:]

    /// Sessions stuck for `reason` now.
    func count(_ reason: Finding.Kind) -> Int { counts[reason] ?? 0 }

    /// Session `id`'s standing findings that hold now. Returns the reasons whose count changed.
    mutating func update(_ id: UInt64, standing: Set<Finding.Kind>) -> Set<Finding.Kind> {
        change(id) { $0.standing = standing }
    }

    /// What a poll found session `id` stuck for (every reason, standing ones included). Returns
    /// the reasons whose count changed.
    mutating func update(_ id: UInt64, timed: Set<Finding.Kind>) -> Set<Finding.Kind> {
        change(id) { $0.timed = timed }
    }

    /// Session `id` ended: its reasons no longer count. Returns the reasons whose count changed.
    mutating func remove(_ id: UInt64) -> Set<Finding.Kind> {
        guard let gone = sessions.removeValue(forKey: id)?.all else { return [] }
        for reason in gone { counts[reason, default: 1] -= 1 }
        return gone
    }

    private mutating func change(_ id: UInt64, _ body: (inout Reasons) -> Void) -> Set<Finding.Kind> {
        var reasons = sessions[id] ?? Reasons()
        let before = reasons.all
        body(&reasons)
        let after = reasons.all
        sessions[id] = after.isEmpty ? nil : reasons
        for reason in after.subtracting(before) { counts[reason, default: 0] += 1 }
        for reason in before.subtracting(after) { counts[reason, default: 1] -= 1 }
        return before.symmetricDifference(after)
    }
}
