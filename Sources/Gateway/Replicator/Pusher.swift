import BLIPCore
import BLIPNIO
import NIOCore
import Replication

/// Pushes one collection of the local database (replication-protocol §5 "Push"): local changes
/// after the checkpoint go out in batches as `changes` (switching to `proposeChanges` for good
/// when the peer answers 409) or as `proposeChanges` from the start; the wanted revisions follow
/// as rev messages (at most ``GatewayLimits/maxUnansweredRevs`` unanswered); the checkpoint's
/// `local` advances after each batch. Revisions that came from the peer are not sent back.
struct Pusher: Sendable {
    let connection: BLIPConnection
    let database: GatewayDatabase
    let configuration: ReplicatorConfiguration
    let path: CollectionPath
    let collectionIndex: Int?
    let keeper: CheckpointKeeper
    let results: ResultCollector
    let changes: LocalChanges

    func run() async throws {
        var since = await keeper.local
        var propose = configuration.proposeChanges
        while true {
            let (entries, through) = database.changes(in: path, since: since, limit: configuration.limits.changesBatchSize,
                                                      filter: ChangesFilter())
            let outgoing = entries.filter { database.document($0.docID, in: path)?.remoteRevID != $0.revID }
            if entries.isEmpty {
                await keeper.noteLocal(since)
                try await keeper.save()
                guard await changes.next() else { return }
                continue
            }
            var wanted: [(ChangeEntry, [String])] = []
            if !outgoing.isEmpty, !propose {
                if let answers = try await offer(outgoing) {
                    wanted = answers
                } else {
                    propose = true
                }
            }
            if !outgoing.isEmpty, propose { wanted = try await proposeChanges(outgoing) }
            try await sendRevisions(wanted, noConflicts: propose)
            since = through
            await keeper.noteLocal(since)
            try await keeper.save()
        }
    }

    private func properties() -> Properties {
        collectionIndex.map { Properties([.collection: String($0)]) } ?? [:]
    }

    /// changes: nil when the peer answers 409 (it is conflict-free: use proposeChanges).
    private func offer(_ entries: [ChangeEntry]) async throws -> [(ChangeEntry, [String])]? {
        let request = BLIPMessage.request(profile: ReplicationProfile.changes.rawValue, properties: properties(),
                                          body: RevisionSender.changesBody(entries))
        let reply = try await connection.request(request)
        if let error = GatewayError.from(reply: reply) {
            if error.isConflict { return nil }
            try refuseBatch(entries, error)
            return []
        }
        let answers = try JSONValue.parse(reply.body, what: "changes reply").arrayValue ?? []
        var wanted: [(ChangeEntry, [String])] = []
        for (offset, entry) in entries.enumerated() {
            if offset < answers.count, let known = answers[offset].arrayValue {
                wanted.append((entry, known.compactMap(\.stringValue)))
            } else {
                database.setRemoteRevID(entry.revID, for: entry.docID, in: path)
                results.update { $0.skippedRevisions += 1 }
            }
        }
        return wanted
    }

    /// proposeChanges (§3): `[docID, revID, serverRevID]`; 0 send, 304 known, 409 conflict.
    private func proposeChanges(_ entries: [ChangeEntry]) async throws -> [(ChangeEntry, [String])] {
        let remoteRevs = entries.map { database.document($0.docID, in: path)?.remoteRevID }
        let body = JSONValue.array(zip(entries, remoteRevs).map { entry, remote in
            .array([.string(entry.docID), .string(entry.revID), .string(remote ?? "")])
        })
        let reply = try await connection.request(.request(profile: ReplicationProfile.proposeChanges.rawValue,
                                                          properties: properties(), body: body.jsonBuffer))
        if let error = GatewayError.from(reply: reply) {
            try refuseBatch(entries, error)
            return []
        }
        let statuses = try JSONValue.parse(reply.body, what: "proposeChanges reply").arrayValue ?? []
        var wanted: [(ChangeEntry, [String])] = []
        for (offset, entry) in entries.enumerated() {
            let status = offset < statuses.count ? statuses[offset].intValue ?? 0 : 0
            switch status {
            case 0: wanted.append((entry, remoteRevs[offset].map { [$0] } ?? []))
            case 304:
                database.setRemoteRevID(entry.revID, for: entry.docID, in: path)
                results.update { $0.skippedRevisions += 1 }
            case 409: recordConflict(entry, reason: "proposeChanges answered 409")
            default:
                results.update {
                    $0.documentErrors.append(DocumentError(docID: entry.docID, revID: entry.revID, status: status,
                                                           reason: "proposeChanges refused it"))
                }
            }
        }
        return wanted
    }

    /// A changes/proposeChanges request refused as a whole: a permanent refusal (403 from a
    /// read-only user, say) fails each of its documents, which are then not pushed and not retried
    /// until they change, as LiteCore records them; anything transient ends the run (wire-format
    /// reference §7).
    private func refuseBatch(_ entries: [ChangeEntry], _ error: GatewayError) throws {
        guard error.closeReaction == .permanent, (400..<500).contains(error.status) else { throw error }
        results.update {
            for entry in entries {
                $0.documentErrors.append(DocumentError(docID: entry.docID, revID: entry.revID, status: error.status,
                                                       reason: error.description))
            }
        }
    }

    private func recordConflict(_ entry: ChangeEntry, reason: String) {
        results.update {
            $0.conflicts.append(ReplicationConflict(docID: entry.docID, revID: entry.revID, side: .push, reason: reason))
        }
    }

    /// rev messages for the wanted revisions, history cut at the peer's known ancestors.
    private func sendRevisions(_ wanted: [(ChangeEntry, [String])], noConflicts: Bool) async throws {
        var start = 0
        while start < wanted.count {
            let chunk = wanted[start..<min(start + configuration.limits.maxUnansweredRevs, wanted.count)]
            start += chunk.count
            var pending: [(ChangeEntry, EventLoopFuture<BLIPMessage>)] = []
            for (entry, known) in chunk {
                guard let revision = database.outgoingRevision(docID: entry.docID, revID: entry.revID, in: path,
                                                               knownAncestors: known,
                                                               maxHistory: configuration.limits.maxRevTreeDepth) else { continue }
                let message = RevisionSender.revMessage(docID: entry.docID, revision, collectionIndex: collectionIndex,
                                                        noConflicts: noConflicts)
                pending.append((entry, try await connection.send(message)))
            }
            for (entry, future) in pending {
                let reply = try await future.get()
                if let error = GatewayError.from(reply: reply) {
                    if error.isConflict {
                        recordConflict(entry, reason: "rev answered 409: \(error)")
                    } else {
                        results.update {
                            $0.documentErrors.append(DocumentError(docID: entry.docID, revID: entry.revID,
                                                                   status: error.status, reason: error.description))
                        }
                    }
                } else {
                    database.setRemoteRevID(entry.revID, for: entry.docID, in: path)
                    results.update { $0.pushedRevisions += 1 }
                }
            }
        }
    }
}
