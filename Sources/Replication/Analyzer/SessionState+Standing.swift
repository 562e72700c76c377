import BLIPCore

/// What a standing finding is about: one checkpoint client ID, or one document revision.
enum StandingSubject: Hashable {
    case checkpoint(client: String)
    case revision(DocRev)
}

/// Standing findings (``Finding/Kind/isStanding``): a condition that messages keep repeating is
/// raised once, when it is first made, and then only counted; it holds until a message shows it
/// over (a setCheckpoint that succeeds, the revision taken). Raising, re-opening or ending one
/// sets ``SessionState/stuckReasonsChanged`` so the relay's stuck gauge follows it live.
extension SessionState {
    /// One more occurrence of the condition about `subject`, `count` so far: raises the finding
    /// `make` builds the first time (kept even past ``AnalyzerLimits/maxFindings``: there is one
    /// per checkpoint client or tracked revision), else updates its count and re-opens it if it
    /// had ended.
    mutating func standingOccurred(_ subject: StandingSubject, count: Int, make: () -> Finding) {
        if let index = standing[subject] {
            findings[index].count = count
            if findings[index].endTime != nil {
                findings[index].endTime = nil
                stuckReasonsChanged = true
            }
            return
        }
        var finding = make()
        finding.count = count
        standing[subject] = findings.count
        findings.append(finding)
        stuckReasonsChanged = true
    }

    /// The condition about `subject` is over at `time` (if it was raised and holds).
    mutating func standingStopped(_ subject: StandingSubject, at time: Double) {
        guard !standing.isEmpty, let index = standing[subject], findings[index].endTime == nil else { return }
        findings[index].endTime = time
        stuckReasonsChanged = true
    }

    /// The standing findings that hold now.
    var holdingStandingFindings: [Finding] {
        standing.values.sorted().map { findings[$0] }.filter(\.holds)
    }

    /// The kinds of the standing findings that hold now.
    var standingStuckReasons: Set<Finding.Kind> {
        Set(standing.values.lazy.map { findings[$0] }.filter(\.holds).map(\.kind))
    }
}
