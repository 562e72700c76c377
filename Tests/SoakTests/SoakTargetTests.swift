import Soak
import Testing

@Suite("Soak verdict: a run's tallies and relay readings against the target")
struct SoakTargetTests {
    /// A clean run: 1,000 messages echoed, the relay at 40 MiB idle, 50 MiB after warm-up,
    /// `lastMiB` at the end of the budget and 18 descriptors idle before and `endFDs` after.
    private func report(lastMiB: Int = 53, endFDs: Int = 18, warmUp: Bool = true,
                        change: (inout SessionTally, inout RelayCounters, inout CaptureSweepCounts) -> Void = { _, _, _ in })
        -> SoakReport {
        var tally = SessionTally()
        tally.sent = 1_000
        tally.echoed = 1_000
        tally.echoSessions = 10
        var relay = RelayCounters()
        relay.messages = 2_000
        var capture = CaptureSweepCounts()
        change(&tally, &relay, &capture)
        var samples = [ResourceSample(moment: .baseline, seconds: 0, echoed: 0, rssKiB: 40 << 10, fds: 18)]
        if warmUp { samples.append(ResourceSample(moment: .warmUp, seconds: 1, echoed: 100, rssKiB: 50 << 10, fds: 60)) }
        samples += [
            ResourceSample(moment: .periodic, seconds: 5, echoed: 500, rssKiB: 58 << 10, fds: 71),
            ResourceSample(moment: .loadEnd, seconds: 9, echoed: 990, rssKiB: lastMiB << 10, fds: 64),
            ResourceSample(moment: .idle, seconds: 10, echoed: 1_000, rssKiB: 52 << 10, fds: endFDs),
        ]
        return SoakReport(messages: 1_000, sessions: 10, seconds: 10, tally: tally, relay: relay, capture: capture,
                          samples: samples)
    }

    @Test("nothing lost, flat memory and descriptors back at the baseline pass")
    func cleanRunPasses() {
        let report = report()
        #expect(report.passed, "\(report.failures)")
        #expect(report.resources.first?.rssKiB == 50 << 10)
        #expect(report.resources.last?.rssKiB == 53 << 10)
        #expect(report.resources.peakRSSKiB == 58 << 10)
        #expect(report.resources.peakFDs == 71)
        #expect(report.text.hasSuffix("PASS"))
    }

    @Test("RSS at the end more than 10 % over RSS after warm-up fails; exactly at the limit passes")
    func memoryGrowth() {
        let grown = report(lastMiB: 56)
        #expect(!grown.passed)
        #expect(grown.failures == ["relay RSS grew 12.0 % from after warm-up to the end (limit 10 %)"])
        #expect(report(lastMiB: 55).passed)
    }

    @Test("a descriptor more when idle after the run than before it fails")
    func descriptorLeak() {
        let leaked = report(endFDs: 19)
        #expect(leaked.failures == ["relay holds 19 descriptors idle after the run, 18 before it"])
        #expect(report(endFDs: 17).passed)
    }

    @Test("without a reading after warm-up the memory target cannot be judged, and the run fails")
    func noWarmUpReading() {
        #expect(report(warmUp: false).failures == ["no RSS reading both after warm-up and at the end"])
    }

    @Test("every lost, reordered, duplicated or corrupted message, error reply, failed session, decode failure or damaged capture byte fails")
    func countsThatMustBeZero() {
        let failing = report { tally, relay, capture in
            tally.lost = 1
            tally.reordered = 2
            tally.duplicated = 3
            tally.corrupted = 4
            tally.errorReplies = 5
            tally.failedSessions = 6
            relay.decodeFailures = 7
            relay.captureDropped = 8
            capture.damagedBytes = 9
            capture.unreadableFiles = 10
        }
        #expect(failing.failures == [
            "1 messages lost", "2 messages reordered", "3 messages duplicated", "4 messages corrupted", "5 error replies",
            "6 sessions failed", "7 decode failures in the relay", "8 capture records dropped", "9 damaged capture bytes",
            "10 unreadable capture files",
        ])
        #expect(failing.text.contains("FAIL: 1 messages lost; 2 messages reordered"))
    }

    @Test("a run that sent nothing fails")
    func nothingSent() {
        let empty = report { tally, _, _ in
            tally.sent = 0
            tally.echoed = 0
        }
        #expect(empty.failures == ["no message was sent"])
    }
}
