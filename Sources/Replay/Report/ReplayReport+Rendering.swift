import Foundation

extension ReplayReport {
    /// Readable lines: one per reply that differs (and per difference under it), one per peer
    /// request not matched, then the summary line.
    public func textLines() -> [String] {
        var lines: [String] = []
        for entry in entries where !entry.differences.isEmpty {
            let verdict = entry.disallowed == 0 ? "allowed" : "DIFFERS"
            lines.append("#\(entry.index) \(entry.profile) (recorded #\(entry.recordedNumber)): "
                         + "\(entry.recordedStatus) → \(entry.newStatus) [\(verdict)]")
            for difference in entry.differences {
                let allowed = difference.allowedBy.map { " (allowed: \($0))" } ?? ""
                lines.append("    \(difference.path): \(difference.old ?? "(absent)") → \(difference.new ?? "(absent)")\(allowed)")
            }
        }
        for note in peerRequestNotes {
            let allowed = note.allowedBy.map { " (allowed: \($0))" } ?? ""
            lines.append("peer \(note.profile) #\(note.number): \(note.outcome)\(allowed)")
        }
        if peerRepliesHeld > 0 {
            lines.append("peer replies held for own requests, as recorded: \(peerRepliesHeld)")
        }
        for problem in captureProblems { lines.append("capture: \(problem)") }
        if let endedEarly { lines.append("ended early: \(endedEarly)") }
        lines.append(summaryLine)
        return lines
    }

    public var summaryLine: String {
        let differing = entries.filter { !$0.differences.isEmpty }.count
        return "\(matches ? "MATCH" : "DIFFERENT"): \(side) role, session \(session), timing \(timing), "
            + "\(subprotocol ?? "no sub-protocol"); sent \(requestsSent)/\(requestsScripted) requests, "
            + "\(differing) replies differ (\(disallowedCount) disallowed differences); "
            + "peer requests \(peerRequestsReceived) received / \(peerRequestsRecorded) recorded, "
            + "\(peerRequestsMatchedExactly) matched exactly, "
            + "\(peerRequestNotes.filter { $0.outcome == "unmatched" }.count) unmatched"
    }

    /// The report as one JSON object (keys sorted), `matches` and `disallowed` included.
    public func jsonText() -> String {
        struct Envelope: Encodable {
            var report: ReplayReport
            var matches: Bool
            var disallowed: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(Envelope(report: self, matches: matches, disallowed: disallowedCount))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
