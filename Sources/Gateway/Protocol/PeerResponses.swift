import BLIPCore
import NIOCore
import Replication

/// Replies both peers give the same way: to `changes` (what they want), to `getAttachment`
/// and to `proveAttachment` (replication-protocol §3).
enum PeerResponses {
    /// The changes reply: per entry 0 when the revision is already here, else the known
    /// ancestors; trailing zeros dropped; `maxHistory` set (§3 "changes", Response).
    static func changesReply(to request: BLIPMessage, _ changes: ChangesRequest, database: GatewayDatabase,
                             collection: CollectionPath, maxHistory: Int) -> (reply: BLIPMessage, wanted: Int) {
        var answers: [JSONValue] = changes.entries.map { entry in
            guard let ancestors = database.knownAncestors(of: entry.docID, revID: entry.revID, in: collection) else {
                return .number("0")
            }
            return .array(ancestors.map(JSONValue.string))
        }
        while answers.last == .number("0") { answers.removeLast() }
        let wanted = answers.filter { $0 != .number("0") }.count
        let reply = BLIPMessage.reply(to: request, properties: Properties([.maxHistory: String(maxHistory)]),
                                      body: JSONValue.array(answers).jsonBuffer)
        return (reply, wanted)
    }

    /// getAttachment: the attachment's bytes, compressed when the request says `compress`;
    /// 404 when the digest is unknown. There is no per-document access control here, so any
    /// stored digest may be read (§3 "getAttachment").
    static func attachmentReply(to request: BLIPMessage, _ get: GetAttachmentRequest,
                                database: GatewayDatabase) throws(GatewayError) -> BLIPMessage {
        guard let digest = get.digest else { throw .badRequest("getAttachment lacks a digest") }
        guard let data = database.attachment(digest: digest) else { throw .notFound("attachment \(digest) not found") }
        let compress = request.properties["compress"] == "true"
        return .reply(to: request, body: data, compressed: compress)
    }

    /// proveAttachment: SHA-1 proof over the nonce and the attachment (§3 "proveAttachment").
    static func proofReply(to request: BLIPMessage, _ prove: ProveAttachmentRequest,
                           database: GatewayDatabase) throws(GatewayError) -> BLIPMessage {
        guard let digest = prove.digest else { throw .badRequest("proveAttachment lacks a digest") }
        guard let data = database.attachment(digest: digest) else { throw .notFound("attachment \(digest) not found") }
        let proof = GatewayDatabase.attachmentProof(nonce: Array(request.body.readableBytesView), data: data)
        return .reply(to: request, body: ByteBuffer(string: proof))
    }
}
