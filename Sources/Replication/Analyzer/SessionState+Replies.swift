import BLIPCore

extension SessionState {
    /// What a reply tells: which revisions are wanted, accepted or refused, checkpoint outcomes.
    mutating func handleReply(_ typed: ReplicationMessage, to request: PendingRequest, from direction: BLIPDirection,
                              at time: Double, latency: Double) {
        let requester = direction.reversed
        let error: ErrorReply?
        if case .error(let reply) = typed.content { error = reply } else { error = nil }
        switch request.message.content {
        case .getCheckpoint(let sent):
            recordCheckpointGet(client: sent.client, reply: typed, error: error, from: direction, at: time)
        case .setCheckpoint(let sent):
            recordCheckpointSet(sent, reply: typed, error: error, from: direction, at: time)
        case .getCollections(let sent):
            recordCollectionCheckpoints(sent, reply: typed, from: direction, at: time)
        case .changes(let sent):
            answerChanges(sent, reply: typed, error: error, requester: requester, at: time)
        case .proposeChanges(let sent):
            answerProposal(sent, reply: typed, error: error, requester: requester, at: time)
        case .rev(let rev):
            answerRev(rev, reply: typed, error: error, requester: requester, at: time, latency: latency)
        case .getAttachment(let sent) where error == nil:
            if case .attachment(let bytes) = typed.content {
                transfer[direction.rawValue].attachmentsSent += 1
                transfer[direction.rawValue].attachmentBytes += bytes
                attachmentEvent(.attachmentSent, digest: sent.digest, docID: sent.docID, bytes: bytes, typed: typed,
                                from: direction, at: time)
            }
        case .proveAttachment(let sent) where error == nil:
            transfer[direction.rawValue].attachmentsProven += 1
            attachmentEvent(.attachmentProven, digest: sent.digest, docID: nil, bytes: nil, typed: typed, from: direction, at: time)
        case .getRev(let sent):
            guard let docID = sent.docID else { break }
            var event = timelineEvent(typed, from: direction, at: time, docID: docID, kind: .revReturned)
            if case .getRevReply(let reply) = typed.content {
                event.revID = reply.revID
                event.bytes = reply.bodyBytes
                event.deleted = reply.deleted
            } else {
                event.note = error?.key
            }
            timelines.append(event)
        default:
            break
        }
    }

    private mutating func answerChanges(_ sent: ChangesRequest, reply: ReplicationMessage, error: ErrorReply?,
                                        requester: BLIPDirection, at time: Double) {
        if let error {
            if error.code == 409 { conflicts += 1 }
            for entry in sent.entries {
                var event = timelineEvent(reply, from: requester.reversed, at: time, docID: entry.docID, kind: .refused, revID: entry.revID)
                event.note = "changes refused with \(error.key)" + (error.code == 409 ? " (peer is conflict-free: proposeChanges expected)" : "")
                timelines.append(event)
            }
            return
        }
        guard case .changesReply(let answers) = reply.content else { return }
        for (index, entry) in sent.entries.enumerated() {
            let answer = answers.answer(at: index)
            var event = timelineEvent(reply, from: requester.reversed, at: time, docID: entry.docID,
                                      kind: answer == .notWanted ? .notWanted : .wanted, revID: entry.revID)
            switch answer {
            case .wanted(let ancestors):
                transfer[requester.rawValue].revisionsWanted += 1
                expectRev(DocRev(docID: entry.docID, revID: entry.revID), from: requester, number: reply.number, at: time)
                if !ancestors.isEmpty { event.note = "knows \(ancestors.count) ancestor(s)" }
            case .notWanted:
                transfer[requester.rawValue].revisionsNotWanted += 1
                event.note = "already known or filtered"
            }
            timelines.append(event)
        }
    }

    private mutating func answerProposal(_ sent: ProposeChangesRequest, reply: ReplicationMessage, error: ErrorReply?,
                                         requester: BLIPDirection, at time: Double) {
        let answers: ProposeChangesReply?
        if case .proposeChangesReply(let parsed) = reply.content { answers = parsed } else { answers = nil }
        for (index, entry) in sent.entries.enumerated() {
            let key = DocRev(docID: entry.docID, revID: entry.revID)
            let status = error.map { _ in -1 } ?? answers?.status(at: index) ?? 0
            var event = timelineEvent(reply, from: requester.reversed, at: time, docID: entry.docID, kind: .refused, revID: entry.revID)
            switch status {
            case 0:
                event.kind = .wanted
                transfer[requester.rawValue].revisionsWanted += 1
                expectRev(key, from: requester, number: reply.number, at: time)
            case 304:
                event.kind = .notWanted
                event.note = "304: the peer already has it"
                transfer[requester.rawValue].revisionsNotWanted += 1
            default:
                event.note = status == 409 ? "409: conflict, resolve and retry"
                    : status == -1 ? "proposeChanges refused with \(error!.key)" : "status \(status)"
                if status == 409 { conflicts += 1 }
                transfer[requester.rawValue].revisionsRefused += 1
                recordRefusal(key, sender: requester, reply: reply, at: time)
            }
            timelines.append(event)
        }
    }

    private mutating func answerRev(_ rev: RevMessage, reply: ReplicationMessage, error: ErrorReply?,
                                    requester: BLIPDirection, at time: Double, latency: Double) {
        if error == nil {
            transfer[requester.rawValue].revisionsAccepted += 1
        } else {
            transfer[requester.rawValue].revisionsRefused += 1
            if error?.code == 409 { conflicts += 1 }
        }
        guard let docID = rev.docID else { return }
        var event = timelineEvent(reply, from: requester.reversed, at: time, docID: docID,
                                  kind: error == nil ? .revAccepted : .revRefused, revID: rev.revID)
        event.latency = latency
        if let error {
            event.note = error.key + (error.message.isEmpty ? "" : " \(error.message.prefix(80))")
            if let revID = rev.revID { recordRefusal(DocRev(docID: docID, revID: revID), sender: requester, reply: reply, at: time) }
        }
        timelines.append(event)
    }

    private mutating func expectRev(_ key: DocRev, from sender: BLIPDirection, number: MessageNumber, at time: Double) {
        guard wanted.count < limits.maxOutstandingRevs else {
            reportLimit("wanted", "more than \(limits.maxOutstandingRevs) wanted revisions outstanding; later ones are not followed", at: time)
            return
        }
        wanted[key] = WantedRev(time: time, sender: sender, number: number)
    }

    private mutating func recordRefusal(_ key: DocRev, sender: BLIPDirection, reply: ReplicationMessage, at time: Double) {
        guard refusals[key] != nil || refusals.count < limits.maxRefusalsTracked else { return }
        let count = (refusals[key] ?? 0) + 1
        refusals[key] = count
        if count == limits.repeatedRefusalThreshold {
            report(.revisionRefusedRepeatedly, side: sender, message: reply, docID: key.docID, at: time,
                   text: "\(key.docID) \(key.revID) refused \(count) times; the sender keeps retrying a revision the peer will not take")
        }
    }

    mutating func attachmentEvent(_ kind: TimelineEvent.Kind, digest: String?, docID: String?, bytes: Int?,
                                  typed: ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        guard let owner = docID ?? digest.flatMap({ attachmentOwners[$0] }) else { return }
        var event = timelineEvent(typed, from: direction, at: time, docID: owner, kind: kind)
        event.note = digest
        event.bytes = bytes
        timelines.append(event)
    }
}
