import BLIPCore
import Foundation
import NIOCore
import Replication

/// Receives one rev / putRev into a database, the same way on both peers
/// (replication-protocol §3 "rev", §5 steps 7–8): for each attachment digest in the body it
/// asks the sender with getAttachment when the database lacks it and with proveAttachment when it
/// has it, and only then adds the revision. The caller replies once the future completes.
/// Event-loop confined to `peer`'s loop.
struct RevisionReceiver {
    let database: GatewayDatabase
    let peer: BLIPPeer
    let eventLoop: EventLoop
    let limits: GatewayLimits

    /// The revision carried by `request` (already typed as `rev`), checked and made ready to insert.
    func incoming(_ request: BLIPMessage, _ rev: RevMessage) throws(GatewayError) -> IncomingRevision {
        guard let docID = rev.docID, !docID.isEmpty else { throw .badRequest("\(rev.profile) lacks a document ID") }
        guard let revID = rev.revID else { throw .badRequest("\(rev.profile) lacks a revision ID") }
        guard request.body.readableBytes <= limits.maxDocumentSize else {
            throw .tooLarge("document \(docID)", size: request.body.readableBytes, limit: limits.maxDocumentSize)
        }
        let body = request.body.readableBytes == 0 ? ByteBuffer(string: "{}") : request.body
        // Sync Gateway refuses a body that is not a JSON object; stored bytes must stay JSON.
        guard try JSONValue.parse(body, what: "\(rev.profile) body").objectValue != nil else {
            throw .badRequest("\(rev.profile) body must be a JSON object")
        }
        if case .success(.version) = RevID.parse(revID) {
            // A version-vector revision (§4): `history` is the rest of its vector, kept as sent.
            let revision = IncomingRevision(docID: docID, revID: revID, deleted: rev.deleted, body: body,
                                            versionHistory: rev.history ?? "")
            guard revision.vector != nil else {
                throw .badRequest("\(rev.profile) \(docID): \(revID) with history \"\(rev.history ?? "")\" is not a version vector")
            }
            return revision
        }
        let history = (rev.history ?? "").split(separator: ",").map { String($0.drop { $0 == " " || $0 == "\t" }) }
            .filter { !$0.isEmpty }
        return IncomingRevision(docID: docID, revID: revID, history: history, deleted: rev.deleted, body: body)
    }

    /// Fetches or verifies the attachments `rev` names, then inserts `revision`.
    func receive(_ revision: IncomingRevision, attachments: [AttachmentReference], collection: CollectionPath,
                 collectionIndex: Int?, noConflicts: Bool) -> EventLoopFuture<InsertOutcome> {
        if let conflict = database.conflict(for: revision, in: collection, noConflicts: noConflicts) {
            // Refuse before fetching attachments for a revision that cannot be added.
            return eventLoop.makeFailedFuture(GatewayError.conflict(conflict))
        }
        var digests: [String] = []
        for reference in attachments where !digests.contains(reference.digest) { digests.append(reference.digest) }
        let checks = digests.map { digest in
            self.database.hasAttachment(digest: digest)
                ? prove(digest, collectionIndex: collectionIndex)
                : fetch(digest, docID: revision.docID, collectionIndex: collectionIndex)
        }
        let database = self.database
        return EventLoopFuture.andAllSucceed(checks, on: eventLoop).flatMapThrowing {
            try database.insert(revision, in: collection, noConflicts: noConflicts)
        }
    }

    private func fetch(_ digest: String, docID: String, collectionIndex: Int?) -> EventLoopFuture<Void> {
        var properties = Properties([.digest: digest, .docID: docID])
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        let database = self.database
        let limit = limits.maxAttachmentSize
        return peer.sendRequest(.request(profile: ReplicationProfile.getAttachment.rawValue, properties: properties))
            .flatMapThrowing { reply in
                if let error = GatewayError.from(reply: reply) { throw error }
                guard reply.body.readableBytes <= limit else {
                    throw GatewayError.tooLarge("attachment \(digest)", size: reply.body.readableBytes, limit: limit)
                }
                try database.storeAttachment(reply.body, expecting: digest)
            }
    }

    private func prove(_ digest: String, collectionIndex: Int?) -> EventLoopFuture<Void> {
        let nonce = (0..<limits.proveAttachmentNonceSize).map { _ in UInt8.random(in: 0...255) }
        guard let data = database.attachment(digest: digest) else { return eventLoop.makeSucceededVoidFuture() }
        let expected = GatewayDatabase.attachmentProof(nonce: nonce, data: data)
        var properties = Properties([.digest: digest])
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        let request = BLIPMessage.request(profile: ReplicationProfile.proveAttachment.rawValue, properties: properties,
                                          body: ByteBuffer(bytes: nonce))
        return peer.sendRequest(request).flatMapThrowing { reply in
            if let error = GatewayError.from(reply: reply) { throw error }
            guard String(buffer: reply.body) == expected else {
                throw GatewayError.forbidden("Incorrect proof for attachment \(digest)")
            }
        }
    }
}
