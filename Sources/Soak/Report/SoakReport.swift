import Foundation

/// The outcome of a soak: what the peers counted, what the relay's metrics said, what became of
/// the capture, the relay's memory and descriptors over the run, and the verdict against
/// ``SoakTarget``. Read-only: the verdict is reached once, from what the run measured, and
/// cannot drift from the figures it was reached on.
public struct SoakReport: Sendable, Equatable, Codable {
    /// Numbered messages asked for, and concurrent sessions.
    public let messages: Int
    public let sessions: Int
    /// Wall-clock seconds from the first session to the last close.
    public let seconds: Double
    public let tally: SessionTally
    public let relay: RelayCounters
    public let capture: CaptureSweepCounts
    /// Lines in the relay's log, which is at warning level: each is a problem or a close to read.
    public let relayLogLines: Int
    public let samples: [ResourceSample]
    public let resources: ResourceSeries
    public let failures: [String]
    /// No failure.
    public let passed: Bool

    public init(messages: Int, sessions: Int, seconds: Double, tally: SessionTally, relay: RelayCounters,
                capture: CaptureSweepCounts, relayLogLines: Int = 0, samples: [ResourceSample], target: SoakTarget = SoakTarget()) {
        self.messages = messages
        self.sessions = sessions
        self.seconds = seconds
        self.tally = tally
        self.relay = relay
        self.capture = capture
        self.relayLogLines = relayLogLines
        self.samples = samples
        resources = ResourceSeries(samples)
        failures = target.failures(tally: tally, relay: relay, capture: capture, resources: resources)
        passed = failures.isEmpty
    }

    /// The report as lines of text, for a person.
    public var text: String {
        let rate = seconds > 0 ? Double(tally.echoed) / seconds : 0
        var lines: [String] = []
        lines.append("soak: \(n(tally.sent)) numbered messages (asked \(n(messages))) over \(sessions) concurrent sessions, "
                     + String(format: "%.0f s (%@ msg/s)", seconds, n(Int(rate))))
        lines.append("sessions: \(n(tally.echoSessions)) echo + \(n(tally.replicationSessions)) replication, churning; "
                     + "\(tally.failedSessions) failed")
        lines.append("messages: echoed \(n(tally.echoed)), lost \(tally.lost), reordered \(tally.reordered), "
                     + "duplicated \(tally.duplicated), corrupted \(tally.corrupted), error replies \(tally.errorReplies)")
        lines.append("replication: \(n(tally.pulledRevisions)) of \(n(tally.expectedRevisions)) revisions pulled")
        let reasons: [String] = relay.closeReasons.sorted { $0.key < $1.key }.map { "\($0.key) \(n($0.value))" }
        lines.append("relay: \(n(relay.messages)) BLIP messages relayed (both directions, replication included), "
                     + "decode failures \(relay.decodeFailures), \(n(relay.sessions)) sessions, closed: "
                     + reasons.joined(separator: ", ") + "; \(relayLogLines) lines in its log (warning level)")
        lines.append(String(format: "capture: %.1f MB written, %@ files removed (at most %.1f MB on disk), %@ read back "
                            + "(%@ records), %d damaged bytes, %d unreadable, %d records dropped",
                            Double(relay.captureBytes) / 1e6, n(capture.filesRemoved), Double(capture.peakDiskBytes) / 1e6,
                            n(capture.filesReadBack), n(capture.recordsReadBack), capture.damagedBytes,
                            capture.unreadableFiles, relay.captureDropped))
        let rss: [(String, Int?)] = [("baseline", resources.baseline?.rssKiB), ("first (after warm-up)", resources.first?.rssKiB),
                                     ("peak", resources.peakRSSKiB), ("last", resources.last?.rssKiB),
                                     ("idle end", resources.end?.rssKiB)]
        var rssLine = "relay RSS MiB: " + rss.map { "\($0.0) \(mebibytes($0.1))" }.joined(separator: ", ")
        if let growth = resources.rssGrowth { rssLine += String(format: " (last/first %+.1f %%)", growth * 100) }
        lines.append(rssLine)
        let fds: [(String, Int?)] = [("baseline", resources.baseline?.fds), ("first", resources.first?.fds),
                                     ("peak", resources.peakFDs), ("last", resources.last?.fds), ("idle end", resources.end?.fds)]
        lines.append("relay fds: " + fds.map { "\($0.0) \($0.1.map(String.init) ?? "-")" }.joined(separator: ", "))
        lines.append(passed ? "PASS" : "FAIL: " + failures.joined(separator: "; "))
        return lines.joined(separator: "\n")
    }

    private func mebibytes(_ kib: Int?) -> String {
        kib.map { String(format: "%.1f", Double($0) / 1024) } ?? "-"
    }

    /// The report as one JSON object.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    private func n(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }
}
