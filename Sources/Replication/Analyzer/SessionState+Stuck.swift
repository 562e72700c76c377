import BLIPCore

extension SessionState {
    /// Why the session is stuck at `now`: the timed rules (below) and the standing findings
    /// that hold (a checkpoint 409 loop, a revision refused again and again).
    func stuckFindings(now: Double) -> [Finding] {
        Self.ordered(timedFindings(now: now) + holdingStandingFindings)
    }

    /// Every finding once, in time order: those raised so far (violations, standing findings with
    /// their running count, held or ended) and the timed rules at `now`.
    func allFindings(now: Double) -> [Finding] {
        Self.ordered(findings + timedFindings(now: now))
    }

    private static func ordered(_ findings: [Finding]) -> [Finding] {
        findings.sorted { ($0.time, $0.kind.rawValue) < ($1.time, $1.kind.rawValue) }
    }

    /// The rules that need a clock: unanswered requests and revs, wanted revs that never came,
    /// ACK pauses, a one-shot pull without caught-up. Once the session has closed, revisions
    /// still on their way are one ``Finding/Kind/closedMidTransfer`` finding, not one each.
    func timedFindings(now: Double) -> [Finding] {
        var found: [Finding] = []
        func add(_ kind: Finding.Kind, _ side: BLIPDirection?, _ since: Double, _ text: String,
                 profile: String? = nil, number: MessageNumber? = nil, docID: String? = nil) {
            found.append(Finding(kind: kind, connection: connection, time: since, side: side, profile: profile,
                                 number: number, docID: docID, message: text))
        }
        let closedMidTransfer = closedMidTransferFinding()
        if let closedMidTransfer { found.append(closedMidTransfer) }
        for direction in BLIPDirection.allCases {
            for (number, request) in pending[direction.rawValue] {
                let age = now - request.time
                let isRev = request.box.message.knownProfile == .rev || request.box.message.knownProfile == .putRev
                guard age > (isRev ? limits.revReplyTimeout : limits.requestTimeout) else { continue }
                if isRev && closedMidTransfer != nil { continue }
                let kind: Finding.Kind = isRev ? .unansweredRev : .unansweredRequest
                var docID: String?
                if case .rev(let rev) = request.box.message.content { docID = rev.docID }
                add(kind, direction.reversed, request.time,
                    "\(request.box.withMessage { $0.requestSummary }) sent by \(direction) has had no reply \(Self.age(age))",
                    profile: request.box.message.profile, number: number, docID: docID)
            }
        }
        if closedMidTransfer == nil {
            for (key, rev) in wanted where now - rev.time > limits.revArrivalTimeout {
                add(.revNeverArrived, rev.sender, rev.time,
                    "\(key.docID) \(key.revID) was wanted (reply #\(rev.number)) but neither rev nor norev came \(Self.age(now - rev.time))",
                    docID: key.docID)
            }
        }
        for (key, since) in paused where now - since > limits.pausedTimeout {
            add(.pausedOnAck, key.direction.reversed, since,
                "\(key.type) #\(key.number) from \(key.direction) is paused waiting for ACKs \(Self.age(now - since))",
                number: key.number)
        }
        if continuous == false, let sender = subChangesSender, caughtUpTime == nil, let start = subChangesTime,
           closedMidTransfer == nil {
            let idleSince = max(start, lastChangesTime ?? start)
            if now - idleSince > limits.caughtUpTimeout {
                add(.notCaughtUp, sender.reversed, idleSince,
                    "one-shot pull has not received the empty changes message (caught up); last changes activity \(Self.age(now - idleSince)) ago")
            }
        }
        return found
    }

    /// After the session closed: one finding for the revisions still on their way (wanted and
    /// neither sent nor refused with norev, or sent and unanswered), naming the close that ended
    /// it; nil when none were, or the session is open.
    func closedMidTransferFinding() -> Finding? {
        guard let close = endingClose else { return nil }
        let unanswered = pending.reduce(0) { total, requests in
            total + requests.values.reduce(0) {
                let profile = $1.box.message.knownProfile
                return $0 + (profile == .rev || profile == .putRev ? 1 : 0)
            }
        }
        let outstanding = wanted.count + unanswered
        guard outstanding > 0 else { return nil }
        var parts: [String] = []
        if !wanted.isEmpty { parts.append("\(wanted.count) wanted and never sent") }
        if unanswered > 0 { parts.append("\(unanswered) sent and never answered") }
        let pull = continuous == false && subChangesSender != nil && caughtUpTime == nil ? ", before the one-shot pull caught up" : ""
        return Finding(kind: .closedMidTransfer, connection: connection, time: close.time, side: nil,
                       message: "\(close.summary) with \(outstanding) revision(s) outstanding (\(parts.joined(separator: ", ")))\(pull)",
                       count: outstanding)
    }

    /// The close that ended the session: the first that is not a normal closure (1000), else the first.
    var endingClose: CloseRecord? {
        closes.first { $0.code != 1000 } ?? closes.first
    }

    static func age(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "until the end" }
        return seconds < 120 ? "for \(Int(seconds)) s" : "for \(Int(seconds / 60)) min"
    }
}
