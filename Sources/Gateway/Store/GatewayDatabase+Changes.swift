import NIOCore
import Replication

/// One line of a changes feed: `[sequence, docID, revID, deleted, bodySize]` (replication-protocol §3 "changes").
public struct ChangeEntry: Sendable, Equatable {
    public var sequence: UInt64
    public var docID: String
    public var revID: String
    public var deleted: Bool
    public var bodySize: Int
    /// The current version, when the revision has one: what a version-vector feed names.
    public var version: String?
}

/// Which changes a subscription wants: subChanges' `sync_gateway/bychannel` channels, body
/// `docIDs`, and `activeOnly` (replication-protocol §3 "subChanges").
struct ChangesFilter: Sendable {
    var channels: Set<String>?
    var docIDs: Set<String>?
    var activeOnly = false

    func admits(_ document: GatewayDocument) -> Bool {
        if activeOnly, document.isDeleted { return false }
        if let docIDs, !docIDs.contains(document.docID) { return false }
        if let channels, !channels.contains("*"), channels.isDisjoint(with: document.channels) { return false }
        return true
    }
}

/// A revision ready to go out in a rev message.
struct OutgoingRevision: Sendable {
    var revID: String
    var deleted: Bool
    var body: ByteBuffer
    var sequence: UInt64
    /// Ancestors to send, parent first, trimmed at the peer's known ancestor and `maxHistory`.
    var history: [String]
    /// The revision's version, when it has one (sent instead to a version-vector peer).
    var version: StoredVersion?
}

extension GatewayDatabase {
    /// Up to `limit` current revisions changed after `since`, in sequence order, that `filter`
    /// admits; `through` is the last sequence looked at, so a filtered-out stretch is not
    /// scanned again.
    func changes(in collection: CollectionPath, since: UInt64, limit: Int,
                 filter: ChangesFilter) -> (entries: [ChangeEntry], through: UInt64) {
        withState { state in
            guard let store = state.stores[collection] else { return ([], since) }
            let log = store.changeLog
            var low = 0, high = log.count
            while low < high {
                let middle = (low + high) / 2
                if log[middle].sequence <= since { low = middle + 1 } else { high = middle }
            }
            var entries: [ChangeEntry] = []
            var through = since
            var index = low
            while index < log.count, entries.count < limit {
                let (sequence, docID) = log[index]
                index += 1
                through = sequence
                guard let document = store.documents[docID], document.sequence == sequence,
                      filter.admits(document) else { continue }
                entries.append(ChangeEntry(sequence: sequence, docID: docID, revID: document.currentRevID,
                                           deleted: document.isDeleted, bodySize: document.body.readableBytes,
                                           version: document.currentVersion?.current))
            }
            return (entries, through)
        }
    }

    /// For a changes entry: nil when `revID` is already here (not wanted), else the revisions
    /// the peer may shorten its history at: the document's leaves older than `revID`
    /// (replication-protocol §3 "changes", Response).
    func knownAncestors(of docID: String, revID: String, in collection: CollectionPath, limit: Int = 20) -> [String]? {
        withState { state in
            guard let document = state.stores[collection]?.documents[docID] else { return [] }
            if let version = try? Version.parse(Substring(revID)).get() {
                // A version-vector peer's entry (§4): the versions held here, as LiteCore 4 answers.
                return document.knows(version) ? nil : [document.versionOrRevID]
            }
            if document.tree.contains(revID) { return nil }
            let generation = StoredRevision.generation(of: revID)
            let candidates = document.tree.leaves.compactMap { document.tree[$0] }.filter { $0.generation < generation }
            return candidates.sorted { RevisionTree.ranksBelow($1, $0) }.prefix(limit).map(\.revID)
        }
    }

    /// proposeChanges' status for one entry (§3 "proposeChanges"): 0 send it, 304 already here,
    /// 409 when the document exists and `serverRevID` is not its current revision. A tombstone
    /// may be built on without naming it, as Sync Gateway allows.
    func proposedChangeStatus(docID: String, revID: String, serverRevID: String?, in collection: CollectionPath) -> Int {
        proposal(docID: docID, revID: revID, vector: nil, serverRevID: serverRevID, in: collection).status
    }

    /// proposeChanges' answer for one entry and, for a conflict, the revision to name: a
    /// version-vector entry (a `vector`, or a `revID` that is a version) is decided by
    /// ``GatewayDocument/proposal(of:serverRevID:)``; a rev-tree one as
    /// ``proposedChangeStatus(docID:revID:serverRevID:in:)`` says.
    func proposal(docID: String, revID: String, vector: String?, serverRevID: String?,
                  in collection: CollectionPath) -> (status: Int, current: String?) {
        let parsed: VersionVector?
        if let vector { parsed = try? VersionVector.parse(vector, omitsCurrent: false).get() }
        else if let version = try? Version.parse(Substring(revID)).get() { parsed = VersionVector(current: version) }
        else { parsed = nil }
        guard let parsed else {
            let status = treeProposalStatus(docID: docID, revID: revID, serverRevID: serverRevID, in: collection)
            return (status, status == 409 ? document(docID, in: collection)?.currentRevID : nil)
        }
        guard let document = document(docID, in: collection) else { return (0, nil) }
        return document.proposal(of: parsed, serverRevID: serverRevID)
    }

    private func treeProposalStatus(docID: String, revID: String, serverRevID: String?, in collection: CollectionPath) -> Int {
        withState { state in
            guard let document = state.stores[collection]?.documents[docID] else { return 0 }
            if document.tree.contains(revID) { return 304 }
            if serverRevID == document.currentRevID { return 0 }
            if serverRevID == nil, document.isDeleted { return 0 }
            return 409
        }
    }

    /// The revision `revID` of `docID` with its body, if still held (only leaves keep bodies).
    func outgoingRevision(docID: String, revID: String, in collection: CollectionPath,
                          knownAncestors: [String], maxHistory: Int) -> OutgoingRevision? {
        withState { state in
            guard let document = state.stores[collection]?.documents[docID],
                  let revision = document.tree[revID], let body = revision.body else { return nil }
            let history = document.tree.ancestry(of: revID, limit: max(maxHistory, 1), stopAt: Set(knownAncestors))
            return OutgoingRevision(revID: revID, deleted: revision.deleted, body: body,
                                    sequence: document.sequence, history: history,
                                    version: document.version.flatMap { $0.revID == revID ? $0 : nil })
        }
    }
}
