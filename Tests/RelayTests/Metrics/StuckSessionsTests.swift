import Replication
import Testing
@testable import Relay

/// The stuck gauge's arithmetic, without a relay: a session counts once per reason, standing
/// and timed reasons add up, and a closed session leaves the gauge.
@Suite struct StuckSessionsTests {
    @Test func aSessionCountsOncePerReasonUntilItStopsOrCloses() {
        var stuck = StuckSessions()
        #expect(stuck.update(1, standing: [.checkpointConflictLoop]) == [.checkpointConflictLoop])
        #expect(stuck.update(2, standing: [.checkpointConflictLoop]) == [.checkpointConflictLoop])
        #expect(stuck.count(.checkpointConflictLoop) == 2)
        // A poll sees the loop too, and a request past its timeout: only the new reason changes.
        #expect(stuck.update(1, timed: [.checkpointConflictLoop, .unansweredRequest]) == [.unansweredRequest])
        #expect(stuck.count(.checkpointConflictLoop) == 2 && stuck.count(.unansweredRequest) == 1)
        // The loop ends (a save succeeded) but the last poll still lists it until the next one.
        #expect(stuck.update(1, standing: []).isEmpty)
        #expect(stuck.update(1, timed: [.unansweredRequest]) == [.checkpointConflictLoop])
        #expect(stuck.count(.checkpointConflictLoop) == 1)
        #expect(stuck.remove(1) == [.unansweredRequest])
        #expect(stuck.remove(2) == [.checkpointConflictLoop])
        #expect(stuck.count(.unansweredRequest) == 0 && stuck.count(.checkpointConflictLoop) == 0)
        #expect(stuck.remove(3).isEmpty)
    }
}
