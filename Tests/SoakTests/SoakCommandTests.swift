import BLIPTestSupport
import Foundation
import Soak
import Testing

@Suite("bench soak through real sockets: a short soak of churning sessions through a relay child")
struct SoakCommandTests {
    @Test("20 sessions churn through 3,000 numbered messages and replication pulls: nothing lost, reordered or corrupted, no decode failure, descriptors back at the baseline")
    func shortSoak() async throws {
        let finished = try await BlipscopeExecutable.runBench(
            ["soak", "--sessions", "20", "--messages", "3000", "--sample-seconds", "1", "--json"], within: 900)
        let report = try JSONDecoder().decode(SoakReport.self, from: Data(finished.output.utf8))
        #expect(report.tally.sent == 3_000)
        #expect(report.tally.echoed == 3_000)
        #expect(report.tally.lost == 0)
        #expect(report.tally.reordered == 0)
        #expect(report.tally.duplicated == 0)
        #expect(report.tally.corrupted == 0)
        #expect(report.tally.errorReplies == 0)
        #expect(report.tally.failedSessions == 0)
        #expect(report.relay.decodeFailures == 0)
        // Sessions churned: many more than the 20 slots, echo and replication, every one closed normally.
        #expect(report.tally.echoSessions > 100)
        #expect(report.tally.replicationSessions > 0)
        #expect(report.tally.pulledRevisions == report.tally.expectedRevisions)
        #expect(report.relay.sessions == report.tally.echoSessions + report.tally.replicationSessions)
        #expect(report.relay.closeReasons.values.reduce(0, +) == report.relay.sessions)
        // The relay decoded the echoes both ways and the replication's messages besides.
        #expect(report.relay.messages > 2 * 3_000)
        // The capture was written, swept, and what was read back was intact.
        #expect(report.relay.captureBytes > 0)
        #expect(report.capture.filesRemoved > 0)
        #expect(report.capture.filesReadBack > 0)
        #expect(report.capture.damagedBytes == 0)
        #expect(report.relay.captureDropped == 0)
        let baseline = try #require(report.resources.baseline)
        let end = try #require(report.resources.end)
        #expect(end.fds <= baseline.fds)
        #expect(report.resources.first != nil && report.resources.last != nil)
        #expect((finished.status == 0) == report.passed, "exit status \(finished.status), report \(report.failures)")
    }
}
