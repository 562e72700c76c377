import BLIPCore
import NIOCore
import Replication

extension PassiveSession {
    /// changes from a pushing client (replication-protocol §3 "changes"): 409 in conflict-free
    /// mode (the client then uses proposeChanges), else the known ancestors of each wanted revision.
    func receiveChanges(_ request: BLIPMessage, _ changes: ChangesRequest, collection: CollectionPath) throws(GatewayError) {
        if conflictFree { throw .conflict("This server is in no-conflicts mode: use proposeChanges") }
        if changes.isCaughtUp {
            peer.answer(request, body: ByteBuffer(string: "[]"))
            return
        }
        let answer = PeerResponses.changesReply(to: request, changes, database: database, collection: collection,
                                                maxHistory: limits.maxRevTreeDepth)
        peer.answer(request, with: answer.reply)
    }

    /// proposeChanges (§3): 0 send it, 304 already here, 409 conflict; trailing zeros dropped. With
    /// `conflictIncludesRev=true` (what LiteCore sends; Sync Gateway reads it as exactly `true`) a
    /// conflict is `{"status":409,"rev":<current>}`, so the client can re-propose on that ancestor.
    ///
    /// A version-vector entry (LiteCore 4: `[docID, "cv; pv…", serverVersion?, bodySize?]`) is
    /// decided on versions, as Sync Gateway 4 does, and a conflict names the current version.
    func proposeChanges(_ request: BLIPMessage, _ propose: ProposeChangesRequest, collection: CollectionPath) {
        let includesRev = request.properties["conflictIncludesRev"] == "true"
        var answers: [JSONValue] = propose.entries.map { entry in
            let answer = database.proposal(docID: entry.docID, revID: entry.revID, vector: entry.vector,
                                           serverRevID: entry.serverRevID, in: collection)
            guard answer.status == 409, includesRev, let current = answer.current else {
                return .number(String(answer.status))
            }
            return .object(["status": .number("409"), PropertyName.rev.rawValue: .string(current)])
        }
        while answers.last == .number("0") { answers.removeLast() }
        peer.answer(request, body: JSONValue.array(answers).jsonBuffer)
    }

    /// rev / putRev (§3 "rev"; Connected Client §3.3): fetches or proves attachments first, then
    /// adds the revision, then replies; a would-be conflict under noconflicts is 409.
    func receiveRev(_ request: BLIPMessage, _ rev: RevMessage, collection: CollectionPath, index: Int?) throws(GatewayError) {
        let receiver = RevisionReceiver(database: database, peer: peer, eventLoop: eventLoop, limits: limits)
        let revision = try receiver.incoming(request, rev)
        receiver.receive(revision, attachments: rev.attachments, collection: collection, collectionIndex: index,
                         noConflicts: rev.noConflicts || conflictFree).whenComplete { [self] result in
            switch result {
            case .success:
                peer.answer(request)
            case .failure(let error):
                let failure = error as? GatewayError ?? .connection("\(error)")
                logger.debug("\(rev.profile) \(revision.docID) \(revision.revID) refused: \(failure)")
                peer.answer(request, error: failure)
            }
        }
    }
}
