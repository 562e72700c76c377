import BLIPCore

extension SessionState {
    /// The stuck rules: unanswered requests and revs, wanted revs that never came, ACK pauses, a
    /// one-shot pull without caught-up, revisions refused again and again, checkpoint 409 loops.
    func stuckFindings(now: Double) -> [Finding] {
        var found: [Finding] = []
        func add(_ kind: Finding.Kind, _ side: BLIPDirection?, _ since: Double, _ text: String,
                 profile: String? = nil, number: MessageNumber? = nil, docID: String? = nil) {
            found.append(Finding(kind: kind, connection: connection, time: since, side: side, profile: profile,
                                 number: number, docID: docID, message: text))
        }
        for direction in BLIPDirection.allCases {
            for (number, request) in pending[direction.rawValue] {
                let age = now - request.time
                let isRev = request.box.message.knownProfile == .rev || request.box.message.knownProfile == .putRev
                guard age > (isRev ? limits.revReplyTimeout : limits.requestTimeout) else { continue }
                let kind: Finding.Kind = isRev ? .unansweredRev : .unansweredRequest
                var docID: String?
                if case .rev(let rev) = request.box.message.content { docID = rev.docID }
                add(kind, direction.reversed, request.time,
                    "\(request.box.withMessage { $0.requestSummary }) sent by \(direction) has had no reply \(Self.age(age))",
                    profile: request.box.message.profile, number: number, docID: docID)
            }
        }
        for (key, rev) in wanted where now - rev.time > limits.revArrivalTimeout {
            add(.revNeverArrived, rev.sender, rev.time,
                "\(key.docID) \(key.revID) was wanted (reply #\(rev.number)) but neither rev nor norev came \(Self.age(now - rev.time))",
                docID: key.docID)
        }
        for (key, since) in paused where now - since > limits.pausedTimeout {
            add(.pausedOnAck, key.direction.reversed, since,
                "\(key.type) #\(key.number) from \(key.direction) is paused waiting for ACKs \(Self.age(now - since))",
                number: key.number)
        }
        if continuous == false, let sender = subChangesSender, caughtUpTime == nil, let start = subChangesTime {
            let idleSince = max(start, lastChangesTime ?? start)
            if now - idleSince > limits.caughtUpTimeout {
                add(.notCaughtUp, sender.reversed, idleSince,
                    "one-shot pull has not received the empty changes message (caught up); last changes activity \(Self.age(now - idleSince)) ago")
            }
        }
        for (key, count) in refusals where count >= limits.repeatedRefusalThreshold {
            add(.revisionRefusedRepeatedly, nil, lastTime ?? 0, "\(key.docID) \(key.revID) refused \(count) times", docID: key.docID)
        }
        for (client, state) in checkpoints where state.consecutiveConflicts >= limits.checkpointConflictLoopThreshold {
            add(.checkpointConflictLoop, nil, state.events.last?.time ?? 0,
                "setCheckpoint client=\(client) failed with 409 \(state.consecutiveConflicts) times in a row", profile: "setCheckpoint")
        }
        return found.sorted { ($0.time, $0.kind.rawValue) < ($1.time, $1.kind.rawValue) }
    }

    static func age(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "until the end" }
        return seconds < 120 ? "for \(Int(seconds)) s" : "for \(Int(seconds / 60)) min"
    }

    func summary() -> ReplicationSummary {
        let pushed = transfer[BLIPDirection.clientToServer.rawValue]
        let pulled = transfer[BLIPDirection.serverToClient.rawValue]
        let pushes = pushed.changesMessages > 0 || pushed.revisionsSent > 0
        let pulls = subChangesSender == .clientToServer || pulled.changesMessages > 0 || pulled.revisionsSent > 0
        let type = pushes && pulls ? "pushAndPull" : pushes ? "push" : pulls ? "pull" : "none"
        let end = closes.last?.time ?? lastTime
        return ReplicationSummary(
            connection: connection, subprotocol: subprotocol, user: user, startTime: startTime, endTime: end,
            durationSeconds: startTime.flatMap { start in end.map { $0 - start } },
            replicationType: type, continuous: continuous, collectionMode: collectionMode.rawValue,
            collections: context.collections.map(\.description), versioning: context.versioning?.rawValue,
            messagesFromClient: messageCounts[0], messagesFromServer: messageCounts[1],
            bytesFromClient: byteCounts[0], bytesFromServer: byteCounts[1],
            pushed: pushed, pulled: pulled, conflicts: conflicts,
            checkpointConflicts: checkpoints.values.reduce(0) { $0 + $1.conflicts },
            errorsByDomainAndCode: errorCounts, caughtUp: caughtUpTime != nil,
            secondsToCaughtUp: caughtUpTime.flatMap { caught in startTime.map { caught - $0 } },
            closes: closes, profiles: profileStats.sorted,
            protocolViolations: violations, findingsDropped: findingsDropped,
            timelineDocumentsEvicted: timelines.evictedDocuments)
    }
}
