import BLIPCore

/// Whether a receiver stored the revisions it got. A rev with a reply says so in the reply; a
/// NoReply rev (how Sync Gateway sends what a client asked for, unless the rev has attachments:
/// docs/sync-gateway-behaviour.md) says nothing, so it counts as *sent* until the receiver shows
/// what it did:
/// - kept: the receiver saved a checkpoint (setCheckpoint answered with success) sent after the
///   rev arrived, while none of the document's attachments was still being fetched, and, when
///   both are numbers, covering the rev's sequence (the checkpoint's `remote`);
/// - not stored: a getAttachment the receiver sent for the document was refused (Sync Gateway
///   answers 403 "Attachment's doc not being synced" when the rev's allowance is gone). This
///   also undoes an earlier acceptance or keeping: a receiver that cannot fetch a revision's
///   attachment drops the document. A rev still awaiting its reply is not counted here: the
///   reply (LiteCore refuses the rev with the same error) says it.
///
/// One NoReply rev is followed per document (a newer one replaces it), at most
/// ``AnalyzerLimits/maxOutstandingRevs``; past that, later ones stay unconfirmed (reported once).
extension SessionState {
    /// A NoReply rev its receiver has; whether it stored it is not known yet.
    struct DeliveredRev {
        var revID: String
        var time: Double
        /// The way the rev went (server → client for a pull).
        var travelled: BLIPDirection
        var sequence: JSONValue?
    }

    /// The last revision of a document its receiver was seen to store, and the way it went.
    struct StoredRev {
        var revID: String
        var travelled: BLIPDirection
    }

    /// `rev` reached its receiver with NoReply: followed until the receiver shows its fate.
    mutating func delivered(_ rev: RevMessage, docID: String, revID: String, travelling direction: BLIPDirection,
                            at time: Double) {
        let docID = DocKey(docID: docID, collection: rev.collection)
        guard delivered[docID] != nil || delivered.count < limits.maxOutstandingRevs else {
            transfer[direction.rawValue].revisionsUnconfirmed += 1
            reportLimit("delivered", "more than \(limits.maxOutstandingRevs) NoReply revisions await confirmation; later ones stay unconfirmed", at: time)
            return
        }
        if delivered[docID] != nil { transfer[direction.rawValue].revisionsUnconfirmed += 1 }  // replaced, never shown
        delivered[docID] = DeliveredRev(revID: revID, time: time, travelled: direction, sequence: rev.sequence)
    }

    /// The receiver stored `revID` of `docID`, which went `direction` (a rev accepted, or kept).
    mutating func stored(_ docID: DocKey, revID: String, travelling direction: BLIPDirection) {
        let index = direction.rawValue
        transfer[index].revisionsStored += 1
        if storedRevs[docID] != nil || storedRevs.count < limits.maxOutstandingRevs {
            storedRevs[docID] = StoredRev(revID: revID, travelled: direction)
        }
        guard distinctDocuments[index].count < limits.maxDistinctDocumentsCounted else {
            if !distinctDocuments[index].contains(docID) { transfer[index].documentsCountIsLowerBound = true }
            return
        }
        if distinctDocuments[index].insert(docID).inserted { transfer[index].documents += 1 }
    }

    /// The receiver asked for one of `docID`'s attachments: until that is answered, a checkpoint
    /// does not show the document kept.
    mutating func attachmentFetchStarted(docID: DocKey) {
        guard fetching[docID] != nil || fetching.count < limits.maxOutstandingRevs else { return }
        fetching[docID, default: 0] += 1
    }

    /// A getAttachment for `docID` was answered (`reply`, travelling `direction`, the way the
    /// document's revs went): with `refusal`, the receiver cannot store the document's revision
    /// (the one it fetches for, or the last it accepted or kept).
    mutating func attachmentFetchEnded(docID id: String, refusal: ErrorReply?, reply: ReplicationMessage,
                                       from direction: BLIPDirection, at time: Double) {
        let docID = DocKey(docID: id, collection: reply.collection)
        if let count = fetching[docID] { fetching[docID] = count > 1 ? count - 1 : nil }
        guard let refusal else { return }
        if let awaiting = revAwaitingReply(docID: docID, sentBy: direction) {
            // Its receiver's reply to the rev will say what it did (LiteCore refuses it with the
            // same error): counted there, not twice.
            var record = timelineRecord(reply, from: direction, at: time, kind: .revNotStored, revID: awaiting)
            record.note = .error(refusal, detailed: true)
            timelines.append(record, docID: id)
            return
        }
        var revID: String?
        if let rev = delivered[docID], rev.travelled == direction {
            delivered[docID] = nil
            revID = rev.revID
        } else if let last = storedRevs[docID], last.travelled == direction {
            storedRevs[docID] = nil
            revID = last.revID
            transfer[direction.rawValue].revisionsStored -= 1
            if distinctDocuments[direction.rawValue].remove(docID) != nil { transfer[direction.rawValue].documents -= 1 }
        }
        transfer[direction.rawValue].revisionsNotStored += 1
        var record = timelineRecord(reply, from: direction, at: time, kind: .revNotStored, revID: revID)
        record.note = .error(refusal, detailed: true)
        timelines.append(record, docID: id)
        let receiver = direction == .serverToClient ? "client" : "server"
        report(.revisionNotStored, side: direction, message: reply, docID: id, at: time,
               text: "\(id) \(revID.map(RevID.abbreviate) ?? "(revision unknown)") not stored by the \(receiver): "
                   + "its getAttachment #\(reply.number) was refused with \(refusal.key)"
                   + (refusal.message.isEmpty ? "" : " \"\(refusal.message.prefix(80))\""))
    }

    /// The revision of `docID` that `sender` sent awaiting a reply and has not been answered yet.
    func revAwaitingReply(docID: DocKey, sentBy sender: BLIPDirection) -> String? {
        for request in pending[sender.rawValue].values {
            if case .rev(let rev) = request.box.message.content, rev.docID == docID.docID,
               request.box.message.collection == docID.collection { return rev.revID ?? "" }
        }
        return nil
    }

    /// A setCheckpoint the receiver of revs travelling `direction` sent at `sentAt` was saved:
    /// the NoReply revs it covers are kept.
    mutating func checkpointSaved(coveringRevsTravelling direction: BLIPDirection, sentAt: Double, body: JSONValue?,
                                  reply: ReplicationMessage, at time: Double) {
        guard !delivered.isEmpty else { return }
        let remote = body?.objectValue?["remote"].flatMap(Self.sequenceNumber)
        // A checkpoint is a collection's (its sequences are that collection's).
        let collection = reply.collection
        let kept = delivered.filter { docID, rev in
            guard rev.travelled == direction, rev.time <= sentAt, fetching[docID] == nil,
                  docID.collection == collection else { return false }
            guard let remote, let sequence = rev.sequence.flatMap(Self.sequenceNumber) else { return true }
            return sequence <= remote
        }
        for (docID, rev) in kept.sorted(by: { $0.value.time < $1.value.time }) {
            delivered[docID] = nil
            transfer[direction.rawValue].revisionsKept += 1
            stored(docID, revID: rev.revID, travelling: direction)
            var record = timelineRecord(reply, from: direction, at: time, kind: .revKept, revID: rev.revID)
            record.note = .text("a checkpoint saved after it")
            timelines.append(record, docID: docID.docID)
        }
    }

    /// NoReply revs travelling `direction` whose fate has not been shown.
    func unconfirmedRevisions(travelling direction: BLIPDirection) -> Int {
        transfer[direction.rawValue].revisionsUnconfirmed + delivered.values.count { $0.travelled == direction }
    }

    /// A sequence as a number, when it is one (Sync Gateway's are numbers, or strings such as
    /// `"5:12"` for a compound sequence, which are not compared).
    static func sequenceNumber(_ value: JSONValue) -> Double? {
        if case .number(let text) = value { return Double(text) }
        return nil
    }
}
