/// What one soak session (or all of them, added up) sent and what came back, in the terms of the
/// soak's verdict. Plain counters: each session fills its own and adds it to the totals once, at
/// its end.
public struct SessionTally: Sendable, Equatable, Codable {
    /// Numbered requests sent.
    public var sent = 0
    /// Requests whose reply came back with the right number and contents.
    public var echoed = 0
    /// Requests that got no reply by the end of their session (which then failed), and
    /// revisions a replication session should have pulled and did not.
    public var lost = 0
    /// One-frame messages overtaken by later ones (``ArrivalOrder``), either direction.
    public var reordered = 0
    /// Messages that arrived twice, either direction.
    public var duplicated = 0
    /// Messages whose body, length or number differed from what was sent, either direction.
    public var corrupted = 0
    /// ERR replies (an echo peer never sends one).
    public var errorReplies = 0
    /// Sessions that ended other than by their own clean close (refused, dropped, timed out).
    public var failedSessions = 0
    /// Echo sessions run to their end.
    public var echoSessions = 0
    /// Replication sessions (one-shot pulls from the embedded gateway) run to their end.
    public var replicationSessions = 0
    /// Revisions the replication sessions pulled, and how many they should have.
    public var pulledRevisions = 0
    public var expectedRevisions = 0

    public init() {}

    public static func + (lhs: SessionTally, rhs: SessionTally) -> SessionTally {
        var sum = lhs
        sum.sent += rhs.sent
        sum.echoed += rhs.echoed
        sum.lost += rhs.lost
        sum.reordered += rhs.reordered
        sum.duplicated += rhs.duplicated
        sum.corrupted += rhs.corrupted
        sum.errorReplies += rhs.errorReplies
        sum.failedSessions += rhs.failedSessions
        sum.echoSessions += rhs.echoSessions
        sum.replicationSessions += rhs.replicationSessions
        sum.pulledRevisions += rhs.pulledRevisions
        sum.expectedRevisions += rhs.expectedRevisions
        return sum
    }

    /// Adds what one direction's ``ArrivalOrder`` saw (a number nobody sent is corrupted).
    public mutating func add(_ order: ArrivalOrder) {
        reordered += order.reordered
        duplicated += order.duplicated
        corrupted += order.outOfRange
    }
}
