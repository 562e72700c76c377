import BLIPCore
import NIOCore
import Replication

/// The active replicator's handler for what the peer sends it (replication-protocol §5 "Pull"
/// steps 4–9, and "Push" step 7): changes are answered with what is wanted, rev and norev
/// complete them, getAttachment and proveAttachment are served from the local database.
///
/// Tracks, per collection, the changes seen in order and which are done, so the checkpoint only
/// advances past sequences whose revisions are stored. `@unchecked Sendable`: used only on the
/// connection's event loop (the replicator creates it for that loop).
final class ActiveSession: @unchecked Sendable {
    private struct PullProgress {
        var subscribed = false
        var caughtUp = false
        /// Sequences in arrival order, each done or awaiting its rev/norev.
        var slots: [(sequence: JSONValue, done: Bool)] = []
        var firstSlot = 0
        var pending: [String: Int] = [:]
    }

    private let database: GatewayDatabase
    private let paths: [CollectionPath]
    private let legacy: Bool
    private let limits: GatewayLimits
    private let results: ResultCollector
    private let eventLoop: EventLoop
    private var pulls: [PullProgress]
    /// Completes when every subscribed collection caught up and its revisions are in.
    let pullCompleted: EventLoopPromise<Void>
    /// Told the latest sequence every earlier change of a collection is done for.
    var onPullProgress: @Sendable (Int, JSONValue) -> Void = { _, _ in }

    init(database: GatewayDatabase, paths: [CollectionPath], legacy: Bool, limits: GatewayLimits,
         results: ResultCollector, eventLoop: EventLoop) {
        self.database = database
        self.paths = paths
        self.legacy = legacy
        self.limits = limits
        self.results = results
        self.eventLoop = eventLoop
        self.pulls = Array(repeating: PullProgress(), count: paths.count)
        self.pullCompleted = eventLoop.makePromise()
    }

    deinit { pullCompleted.fail(GatewayError.connection("replication ended")) }

    /// Marks `index` as pulled (its subChanges is about to go out).
    func subscribe(_ index: Int) { pulls[index].subscribed = true }

    /// What the pull waits on fails with when the connection ends first.
    static let closedBeforeFinishing = GatewayError.connection("the peer closed the connection before replication finished")

    func connectionClosed() {
        pullCompleted.fail(Self.closedBeforeFinishing)
    }

    func handle(_ request: BLIPMessage, from handler: BLIPPeer) {
        guard let profile = request.profile.flatMap(ReplicationProfile.init(rawValue:)) else {
            handler.answer(request, with: GatewayError.noHandler(for: request))
            return
        }
        let typed = ReplicationMessage(request, context: MessageContext(collections: legacy ? [] : paths,
                                                                        maxJSONBodyBytes: limits.maxDocumentSize))
        do {
            let index = typed.collection ?? 0
            guard index < paths.count, legacy == (typed.collection == nil) || !profile.takesCollection else {
                throw GatewayError.badRequest("unknown collection \(typed.collection.map(String.init) ?? "(none)")")
            }
            if let violation = typed.violations.first { throw GatewayError.badRequest(violation.description) }
            switch typed.content {
            case .changes(let changes): receiveChanges(request, changes, index: index, peer: handler)
            case .rev(let rev): try receiveRev(request, rev, index: index, peer: handler)
            case .norev(let norev):
                results.update {
                    $0.documentErrors.append(DocumentError(docID: norev.docID ?? "", revID: norev.revID ?? "",
                                                           status: norev.error ?? 404, reason: norev.reason ?? ReplicationProfile.norev.rawValue))
                }
                complete(index: index, docID: norev.docID ?? "", revID: norev.revID ?? "")
                handler.answer(request)
            case .getAttachment(let get):
                handler.answer(request, with: try PeerResponses.attachmentReply(to: request, get, database: database))
                results.update { $0.pushedAttachments += 1 }
            case .proveAttachment(let prove):
                handler.answer(request, with: try PeerResponses.proofReply(to: request, prove, database: database))
            default:
                handler.answer(request, with: GatewayError.noHandler(for: request))
            }
        } catch {
            handler.answer(request, error: error as? GatewayError ?? .badRequest("\(error)"))
        }
    }

    private func receiveChanges(_ request: BLIPMessage, _ changes: ChangesRequest, index: Int, peer: BLIPPeer) {
        if changes.isCaughtUp {
            pulls[index].caughtUp = true
            peer.answer(request, body: ByteBuffer(string: "[]"))
            checkCompletion()
            return
        }
        let answer = PeerResponses.changesReply(to: request, changes, database: database, collection: paths[index],
                                                maxHistory: limits.maxRevTreeDepth)
        let skipped = changes.entries.count - answer.wanted
        results.update { $0.skippedRevisions += skipped }
        var answers: [JSONValue] = []
        if let parsed = try? JSONValue.parse(answer.reply.body, what: "changes reply") { answers = parsed.arrayValue ?? [] }
        for (offset, entry) in changes.entries.enumerated() {
            let wanted = offset < answers.count && answers[offset].arrayValue != nil
            pulls[index].slots.append((entry.sequence, !wanted))
            if wanted {
                pulls[index].pending[Self.key(entry.docID, entry.revID)] = pulls[index].firstSlot + pulls[index].slots.count - 1
            }
        }
        peer.answer(request, with: answer.reply)
        advance(index)
    }

    private func receiveRev(_ request: BLIPMessage, _ rev: RevMessage, index: Int, peer: BLIPPeer) throws {
        let receiver = RevisionReceiver(database: database, peer: peer, eventLoop: eventLoop, limits: limits)
        let revision = try receiver.incoming(request, rev)
        let path = paths[index]
        let replier = NIOLoopBound(peer, eventLoop: eventLoop)
        let fetchedBefore = rev.attachments.filter { !database.hasAttachment(digest: $0.digest) }.count
        receiver.receive(revision, attachments: rev.attachments, collection: path,
                         collectionIndex: legacy ? nil : index, noConflicts: false).whenComplete { [self] result in
            switch result {
            case .success(let outcome):
                database.setRemoteRevID(revision.revID, for: revision.docID, in: path)
                let document = database.document(revision.docID, in: path)
                results.update { result in
                    if case .added = outcome { result.pulledRevisions += 1 }
                    result.pulledAttachments += fetchedBefore
                    if let document, document.conflictingRevIDs.contains(revision.revID) || (document.currentRevID == revision.revID && !document.conflictingRevIDs.isEmpty) {
                        result.conflicts.append(ReplicationConflict(docID: revision.docID, revID: revision.revID, side: .pull,
                                                                    reason: "pulled revision branches from the local one"))
                    }
                }
                replier.value.answer(request)
            case .failure(let error):
                let failure = error as? GatewayError ?? .connection("\(error)")
                results.update {
                    $0.documentErrors.append(DocumentError(docID: revision.docID, revID: revision.revID,
                                                           status: failure.status, reason: failure.description))
                }
                replier.value.answer(request, error: failure)
            }
            complete(index: index, docID: revision.docID, revID: revision.revID)
        }
    }

    private static func key(_ docID: String, _ revID: String) -> String { docID + "\u{1}" + revID }

    private func complete(index: Int, docID: String, revID: String) {
        guard let slot = pulls[index].pending.removeValue(forKey: Self.key(docID, revID)) else { return }
        pulls[index].slots[slot - pulls[index].firstSlot].done = true
        advance(index)
    }

    /// Drops the done prefix of the slots and reports its last sequence as checkpointable.
    private func advance(_ index: Int) {
        var last: JSONValue?
        var dropped = 0
        for slot in pulls[index].slots {
            guard slot.done else { break }
            last = slot.sequence
            dropped += 1
        }
        if dropped > 0 {
            pulls[index].slots.removeFirst(dropped)
            pulls[index].firstSlot += dropped
        }
        if let last { onPullProgress(index, last) }
        checkCompletion()
    }

    private func checkCompletion() {
        let done = pulls.allSatisfy { !$0.subscribed || ($0.caughtUp && $0.slots.isEmpty) }
        if done, pulls.contains(where: \.subscribed) { pullCompleted.succeed() }
    }
}
