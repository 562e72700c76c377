import BLIPCore

extension SessionState {
    /// What a request tells about the replication (§5 Push and Pull steps).
    mutating func handleRequest(_ typed: borrowing ReplicationMessage, noReply: Bool, from direction: BLIPDirection, at time: Double) {
        switch typed.content {
        case .getCheckpoint(let request):
            claimCheckpoint(request.client, message: typed, from: direction, at: time)
        case .setCheckpoint(let request):
            claimCheckpoint(request.client, message: typed, from: direction, at: time)
            if direction == .clientToServer { lastCheckpointSave = CheckpointSave(sentAt: time) }
        case .getCollections(let request):
            context.collections = request.collections
            for client in request.checkpointIDs { claimCheckpoint(client, message: typed, from: direction, at: time) }
        case .subChanges(let request):
            if let versioning = request.versioning { context.versioning = versioning }
            subChangesTime = time
            subChangesSender = direction
            continuous = request.continuous
        case .changes(let request):
            offerChanges(request, typed: typed, from: direction, at: time)
        case .proposeChanges(let request):
            // A proposal is an offer (§3 "proposeChanges"): counted with changes' entries.
            transfer[direction.rawValue].changesMessages += 1
            transfer[direction.rawValue].revisionsOffered += request.entries.count
            transfer[direction.rawValue].revisionsProposed += request.entries.count
            for entry in request.entries {
                var record = timelineRecord(typed, from: direction, at: time, kind: .proposed, revID: entry.revID)
                record.note = entry.serverRevID.map(TimelineNote.text)
                timelines.append(record, docID: entry.docID)
            }
        case .rev(let rev):
            sendRev(rev, typed: typed, noReply: noReply, from: direction, at: time)
        case .norev(let norev):
            transfer[direction.rawValue].norevs += 1
            if direction == .clientToServer { lastPushAnswerTime = time }
            guard let docID = norev.docID else { break }
            if let revID = norev.revID { wanted[DocRev(docID: docID, revID: revID, collection: norev.collection)] = nil }
            var record = timelineRecord(typed, from: direction, at: time, kind: .noRev, revID: norev.revID)
            record.note = .norev(error: norev.error, reason: norev.reason)
            timelines.append(record, docID: docID)
        case .getAttachment(let request):
            if let owner = request.docID ?? request.digest.flatMap({ attachmentOwners[$0] }) {
                attachmentFetchStarted(docID: DocKey(docID: owner, collection: request.collection))
            }
            attachmentEvent(.attachmentRequested, digest: request.digest, docID: request.docID, bytes: nil, typed: typed, from: direction, at: time)
        case .proveAttachment(let request):
            attachmentEvent(.attachmentProofRequested, digest: request.digest, docID: nil, bytes: nil, typed: typed, from: direction, at: time)
        case .getRev(let request):
            if let docID = request.docID {
                timelines.append(timelineRecord(typed, from: direction, at: time, kind: .revRequested), docID: docID)
            }
        default:
            break
        }
    }

    /// A request the relay kept from its receiver: only a rev leaves a trace (counted withheld,
    /// on its document's timeline); the revision it carried will not come that way, so it is no
    /// longer waited for. Its answer (the relay's) is read as any reply.
    mutating func handleWithheld(_ typed: borrowing ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        guard case .rev(let rev) = typed.content else { return }
        transfer[direction.rawValue].revisionsWithheld += 1
        guard let docID = rev.docID else { return }
        if let revID = rev.revID { wanted[DocRev(docID: docID, revID: revID, collection: rev.collection)] = nil }
        timelines.append(timelineRecord(typed, from: direction, at: time, kind: .revWithheld, revID: rev.revID), docID: docID)
    }

    /// A timeline record for an event that `typed` caused; the caller adds the details.
    func timelineRecord(_ typed: ReplicationMessage, from direction: BLIPDirection, at time: Double,
                        kind: TimelineEvent.Kind, revID: String? = nil) -> TimelineRecord {
        var record = TimelineRecord(time: time, from: direction, type: typed.type, number: typed.number,
                                    profile: typed.knownProfile, kind: kind, revID: revID)
        if let collection = typed.collection { record.collection = Int32(clamping: collection) }
        return record
    }

    private mutating func offerChanges(_ request: ChangesRequest, typed: ReplicationMessage, from direction: BLIPDirection,
                                       at time: Double) {
        transfer[direction.rawValue].changesMessages += 1
        transfer[direction.rawValue].revisionsOffered += request.entries.count
        lastChangesTime = time
        if request.isCaughtUp, subChangesSender == direction.reversed, caughtUpTime == nil {
            caughtUpTime = time
        }
        guard limits.maxEventsPerDocument > 0 else { return }
        let template = timelineRecord(typed, from: direction, at: time, kind: .offered)
        for entry in request.entries {
            var record = template
            record.revID = entry.revID
            record.sequence = entry.sequence
            record.deleted = entry.deleted
            record.setBytes(entry.bodySize)
            if entry.revoked || entry.removed {
                transfer[direction.rawValue].revisionsRevoked += 1
                record.note = .revokedOrRemoved(revoked: entry.revoked, removed: entry.removed)
            }
            timelines.append(record, docID: entry.docID)
        }
    }

    private mutating func sendRev(_ rev: RevMessage, typed: ReplicationMessage, noReply: Bool, from direction: BLIPDirection,
                                  at time: Double) {
        var counts = transfer[direction.rawValue]
        counts.revisionsSent += 1
        counts.revisionBytes += rev.bodyBytes
        if rev.deleted { counts.tombstones += 1 }
        transfer[direction.rawValue] = counts
        guard let docID = rev.docID else { return }
        if let revID = rev.revID {
            wanted[DocRev(docID: docID, revID: revID, collection: rev.collection)] = nil
            // Stored or not is the reply's to say; a NoReply rev's receiver shows it later.
            if noReply { delivered(rev, docID: docID, revID: revID, travelling: direction, at: time) }
        }
        if let replaced = rev.replacedRev { wanted[DocRev(docID: docID, revID: replaced, collection: rev.collection)] = nil }
        if !rev.attachments.isEmpty {
            if attachmentOwners.count + rev.attachments.count > Self.maxAttachmentOwners { attachmentOwners.removeAll() }
            for attachment in rev.attachments { attachmentOwners[attachment.digest] = docID }
        }
        var record = timelineRecord(typed, from: direction, at: time, kind: .revSent, revID: rev.revID)
        record.bytes = rev.bodyBytes
        record.historyCount = rev.history == nil ? -1 : Int32(clamping: rev.historyCount)
        record.attachmentCount = Int32(clamping: rev.attachments.count)
        record.deleted = rev.deleted
        if noReply { record.note = .text("NoReply: stored or not is not on the wire") }
        timelines.append(record, docID: docID)
    }

    /// Records `client` for this session; another live session using it is a finding.
    private mutating func claimCheckpoint(_ client: String?, message: ReplicationMessage, from direction: BLIPDirection,
                                          at time: Double) {
        guard let client, let registry else { return }
        let others = registry.claim(client: client, session: connection)
        guard !others.isEmpty, limitsReported.insert("shared:\(client)").inserted else { return }
        let list = others.map(String.init).joined(separator: ", ")
        report(.sharedCheckpointClient, side: direction, message: message, at: time,
               text: "checkpoint client ID \"\(client)\" is also in use by live session(s) \(list); their setCheckpoints will conflict (409)")
    }
}
