import BLIPCore

extension SessionState {
    /// What a reply tells: which revisions are wanted, accepted or refused, checkpoint outcomes.
    mutating func handleReply(_ typed: borrowing ReplicationMessage, to request: PendingRequest, from direction: BLIPDirection,
                              at time: Double, latency: Double) {
        let requester = direction.reversed
        let error: ErrorReply?
        if case .error(let reply) = typed.content { error = reply } else { error = nil }
        switch request.box.message.content {
        case .getCheckpoint(let sent):
            recordCheckpointGet(client: sent.client, reply: typed, error: error, from: direction, at: time)
        case .setCheckpoint(let sent):
            recordCheckpointSet(sent, reply: typed, error: error, from: direction, at: time)
            if requester == .clientToServer, error == nil, lastCheckpointSave?.sentAt == request.time {
                lastCheckpointSave?.savedAt = time
            }
            if error == nil {
                checkpointSaved(coveringRevsTravelling: direction, sentAt: request.time, body: sent.body, reply: typed, at: time)
            }
        case .getCollections(let sent):
            recordCollectionCheckpoints(sent, reply: typed, from: direction, at: time)
        case .changes(let sent):
            if requester == .clientToServer { lastPushAnswerTime = time }
            answerChanges(sent, reply: typed, error: error, requester: requester, at: time)
        case .proposeChanges(let sent):
            if requester == .clientToServer { lastPushAnswerTime = time }
            answerProposal(sent, reply: typed, error: error, requester: requester, at: time)
        case .rev(let rev):
            if requester == .clientToServer { lastPushAnswerTime = time }
            answerRev(rev, reply: typed, error: error, requester: requester, at: time, latency: latency)
        case .getAttachment(let sent):
            if let owner = sent.docID ?? sent.digest.flatMap({ attachmentOwners[$0] }) {
                attachmentFetchEnded(docID: owner, refusal: error, reply: typed, from: direction, at: time)
            }
            if error == nil, case .attachment(let bytes) = typed.content {
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
            var record = timelineRecord(typed, from: direction, at: time, kind: .revReturned)
            if case .getRevReply(let reply) = typed.content {
                record.revID = reply.revID
                record.bytes = reply.bodyBytes
                record.deleted = reply.deleted
            } else {
                record.note = error.map { .error($0, detailed: false) }
            }
            timelines.append(record, docID: docID)
        default:
            break
        }
    }

    private mutating func answerChanges(_ sent: ChangesRequest, reply: ReplicationMessage, error: ErrorReply?,
                                        requester: BLIPDirection, at time: Double) {
        if let error {
            if error.code == 409 { conflicts += 1 }
            var template = timelineRecord(reply, from: requester.reversed, at: time, kind: .refused)
            template.note = .changesRefused(error)
            for entry in sent.entries {
                var record = template
                record.revID = entry.revID
                timelines.append(record, docID: entry.docID)
            }
            return
        }
        guard case .changesReply(let answers) = reply.content else { return }
        let template = timelineRecord(reply, from: requester.reversed, at: time, kind: .wanted)
        for (index, entry) in sent.entries.enumerated() {
            var record = template
            record.revID = entry.revID
            switch answers.answer(at: index) {
            case .wanted(let ancestors):
                transfer[requester.rawValue].revisionsWanted += 1
                expectRev(DocRev(docID: entry.docID, revID: entry.revID, collection: sent.collection), from: requester,
                          number: reply.number, at: time)
                if !ancestors.isEmpty { record.note = .knowsAncestors(ancestors.count) }
            case .notWanted:
                transfer[requester.rawValue].revisionsNotWanted += 1
                record.kind = .notWanted
                record.note = entry.revoked || entry.removed ? .revokedOrRemoved(revoked: entry.revoked, removed: entry.removed)
                    : .alreadyKnownOrFiltered
            }
            timelines.append(record, docID: entry.docID)
        }
    }

    private mutating func answerProposal(_ sent: ProposeChangesRequest, reply: ReplicationMessage, error: ErrorReply?,
                                         requester: BLIPDirection, at time: Double) {
        let answers: ProposeChangesReply?
        if case .proposeChangesReply(let parsed) = reply.content { answers = parsed } else { answers = nil }
        for (index, entry) in sent.entries.enumerated() {
            let key = DocRev(docID: entry.docID, revID: entry.revID, collection: sent.collection)
            let answer = error == nil ? answers?.answer(at: index) ?? .send : ProposeChangesReply.Answer(status: -1)
            let status = answer.status
            var record = timelineRecord(reply, from: requester.reversed, at: time, kind: .refused, revID: entry.revID)
            switch status {
            case 0:
                record.kind = .wanted
                transfer[requester.rawValue].revisionsWanted += 1
                expectRev(key, from: requester, number: reply.number, at: time)
                standingStopped(.revision(key), at: time)
            case 304:
                record.kind = .notWanted
                record.note = .peerHasIt
                transfer[requester.rawValue].revisionsNotWanted += 1
                standingStopped(.revision(key), at: time)
            default:
                record.note = .proposalRefused(status: status, error: error, serverRevID: answer.serverRevID)
                if status == 409 { conflicts += 1 }
                transfer[requester.rawValue].revisionsRefused += 1
                recordRefusal(key, sender: requester, reply: reply, at: time)
            }
            timelines.append(record, docID: entry.docID)
        }
    }

    private mutating func answerRev(_ rev: RevMessage, reply: ReplicationMessage, error: ErrorReply?,
                                    requester: BLIPDirection, at time: Double, latency: Double) {
        if error == nil {
            transfer[requester.rawValue].revisionsAccepted += 1
            if let docID = rev.docID, let revID = rev.revID {
                stored(DocKey(docID: docID, collection: rev.collection), revID: revID, travelling: requester)
                standingStopped(.revision(DocRev(docID: docID, revID: revID, collection: rev.collection)), at: time)
            }
        } else {
            transfer[requester.rawValue].revisionsRefused += 1
            if error?.code == 409 { conflicts += 1 }
        }
        guard let docID = rev.docID else { return }
        var record = timelineRecord(reply, from: requester.reversed, at: time,
                                    kind: error == nil ? .revAccepted : .revRefused, revID: rev.revID)
        record.latency = latency
        if let error {
            record.note = .error(error, detailed: true)
            if let revID = rev.revID {
                recordRefusal(DocRev(docID: docID, revID: revID, collection: rev.collection), sender: requester, reply: reply, at: time)
            }
        }
        timelines.append(record, docID: docID)
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
        guard count >= limits.repeatedRefusalThreshold else { return }
        let connection = connection  // the closure may not capture self, which is being changed
        standingOccurred(.revision(key), count: count) {
            Finding(kind: .revisionRefusedRepeatedly, connection: connection, time: time, side: sender,
                    profile: reply.profile, number: reply.number, docID: key.docID,
                    message: "\(key.docID) \(key.revID) refused again and again; the sender keeps retrying a revision the peer will not take")
        }
    }

    mutating func attachmentEvent(_ kind: TimelineEvent.Kind, digest: String?, docID: String?, bytes: Int?,
                                  typed: ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        guard let owner = docID ?? digest.flatMap({ attachmentOwners[$0] }) else { return }
        var record = timelineRecord(typed, from: direction, at: time, kind: kind)
        record.note = digest.map(TimelineNote.text)
        record.setBytes(bytes)
        timelines.append(record, docID: owner)
    }
}
