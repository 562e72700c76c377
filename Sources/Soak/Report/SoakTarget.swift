import Foundation

/// What a soak must show to pass: nothing lost, reordered, duplicated or corrupted, no decode
/// failure in the relay, no failed session, the capture intact, the relay's memory flat and its
/// file descriptors back where they started.
public struct SoakTarget: Sendable, Equatable, Codable {
    /// RSS under load at the end may exceed RSS under load after warm-up by this share at most.
    public var maxRSSGrowth = 0.10
    /// Open descriptors once idle again may exceed the idle baseline by this many at most.
    public var maxExtraFDs = 0

    public init() {}

    /// The reasons the run fails the target, one sentence each; empty when it passes.
    public func failures(tally: SessionTally, relay: RelayCounters, capture: CaptureSweepCounts,
                         resources: ResourceSeries) -> [String] {
        var failures: [String] = []
        func zero(_ count: Int, _ what: String) {
            if count != 0 { failures.append("\(count) \(what)") }
        }
        zero(tally.lost, "messages lost")
        zero(tally.reordered, "messages reordered")
        zero(tally.duplicated, "messages duplicated")
        zero(tally.corrupted, "messages corrupted")
        zero(tally.errorReplies, "error replies")
        zero(tally.failedSessions, "sessions failed")
        zero(relay.decodeFailures, "decode failures in the relay")
        zero(relay.captureDropped, "capture records dropped")
        zero(capture.damagedBytes, "damaged capture bytes")
        zero(capture.unreadableFiles, "unreadable capture files")
        if tally.sent == 0 { failures.append("no message was sent") }
        if let growth = resources.rssGrowth, let first = resources.first, let last = resources.last {
            // Compared as a product, not as the growth: 55 / 50 - 1 is a hair over 0.10 in doubles.
            if Double(last.rssKiB) > Double(first.rssKiB) * (1 + maxRSSGrowth) {
                failures.append(String(format: "relay RSS grew %.1f %% from after warm-up to the end (limit %.0f %%)",
                                       growth * 100, maxRSSGrowth * 100))
            }
        } else {
            failures.append("no RSS reading both after warm-up and at the end")
        }
        if let baseline = resources.baseline, let end = resources.end {
            if end.fds > baseline.fds + maxExtraFDs {
                failures.append("relay holds \(end.fds) descriptors idle after the run, \(baseline.fds) before it")
            }
        } else {
            failures.append("no descriptor count both before and after the run")
        }
        return failures
    }
}
