import BLIPCore

extension SessionState {
    /// What a request tells about the replication (§5 Push and Pull steps).
    mutating func handleRequest(_ typed: ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        switch typed.content {
        case .getCheckpoint(let request):
            claimCheckpoint(request.client, message: typed, from: direction, at: time)
        case .setCheckpoint(let request):
            claimCheckpoint(request.client, message: typed, from: direction, at: time)
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
            transfer[direction.rawValue].changesMessages += 1
            transfer[direction.rawValue].revisionsProposed += request.entries.count
            for entry in request.entries {
                var event = timelineEvent(typed, from: direction, at: time, docID: entry.docID, kind: .proposed, revID: entry.revID)
                event.note = entry.serverRevID
                timelines.append(event)
            }
        case .rev(let rev):
            sendRev(rev, typed: typed, from: direction, at: time)
        case .norev(let norev):
            transfer[direction.rawValue].norevs += 1
            guard let docID = norev.docID else { break }
            if let revID = norev.revID { wanted[DocRev(docID: docID, revID: revID)] = nil }
            var event = timelineEvent(typed, from: direction, at: time, docID: docID, kind: .noRev, revID: norev.revID)
            event.note = [norev.error.map(String.init), norev.reason].compactMap { $0 }.joined(separator: " ")
            timelines.append(event)
        case .getAttachment(let request):
            attachmentEvent(.attachmentRequested, digest: request.digest, docID: request.docID, bytes: nil, typed: typed, from: direction, at: time)
        case .proveAttachment(let request):
            attachmentEvent(.attachmentProofRequested, digest: request.digest, docID: nil, bytes: nil, typed: typed, from: direction, at: time)
        case .getRev(let request):
            if let docID = request.docID {
                timelines.append(timelineEvent(typed, from: direction, at: time, docID: docID, kind: .revRequested))
            }
        default:
            break
        }
    }

    func timelineEvent(_ typed: ReplicationMessage, from direction: BLIPDirection, at time: Double, docID: String,
                       kind: TimelineEvent.Kind, revID: String? = nil) -> TimelineEvent {
        TimelineEvent(connection: connection, time: time, from: direction, type: typed.type, number: typed.number,
                      profile: typed.profile ?? "?", docID: docID, kind: kind, revID: revID)
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
        for entry in request.entries {
            var event = timelineEvent(typed, from: direction, at: time, docID: entry.docID, kind: .offered, revID: entry.revID)
            event.sequence = entry.sequence
            event.deleted = entry.deleted
            event.bytes = entry.bodySize
            timelines.append(event)
        }
    }

    private mutating func sendRev(_ rev: RevMessage, typed: ReplicationMessage, from direction: BLIPDirection, at time: Double) {
        var counts = transfer[direction.rawValue]
        counts.revisionsSent += 1
        counts.revisionBytes += rev.bodyBytes
        if rev.deleted { counts.tombstones += 1 }
        transfer[direction.rawValue] = counts
        guard let docID = rev.docID else { return }
        countDocument(docID, sentBy: direction)
        if let revID = rev.revID { wanted[DocRev(docID: docID, revID: revID)] = nil }
        if let replaced = rev.replacedRev { wanted[DocRev(docID: docID, revID: replaced)] = nil }
        if !rev.attachments.isEmpty {
            if attachmentOwners.count + rev.attachments.count > Self.maxAttachmentOwners { attachmentOwners.removeAll() }
            for attachment in rev.attachments { attachmentOwners[attachment.digest] = docID }
        }
        var event = timelineEvent(typed, from: direction, at: time, docID: docID, kind: .revSent, revID: rev.revID)
        event.bytes = rev.bodyBytes
        event.historyCount = rev.history == nil ? nil : rev.historyCount
        event.attachmentCount = rev.attachments.count
        event.deleted = rev.deleted
        timelines.append(event)
    }

    private mutating func countDocument(_ docID: String, sentBy direction: BLIPDirection) {
        let index = direction.rawValue
        guard distinctDocuments[index].count < limits.maxDistinctDocumentsCounted else {
            if !distinctDocuments[index].contains(docID) { transfer[index].documentsCountIsLowerBound = true }
            return
        }
        if distinctDocuments[index].insert(docID).inserted { transfer[index].documents += 1 }
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
