import BLIPCore
import NIOCore
import Replication

/// Builds the messages that carry revisions out, the same way on both peers.
enum RevisionSender {
    /// A rev message for `revision` (replication-protocol §3 "rev"): `id`, `rev`, JSON `sequence`,
    /// comma-separated `history` (current revision omitted, §4), `deleted`, `collection`.
    static func revMessage(docID: String, _ revision: OutgoingRevision, collectionIndex: Int?,
                           noConflicts: Bool = false, profile: ReplicationProfile = .rev) -> BLIPMessage {
        var properties: Properties = ["id": docID, "rev": revision.revID, "sequence": String(revision.sequence)]
        if !revision.history.isEmpty { properties["history"] = revision.history.joined(separator: ",") }
        if revision.deleted { properties["deleted"] = "true" }
        if noConflicts { properties["noconflicts"] = "true" }
        if let collectionIndex { properties["collection"] = String(collectionIndex) }
        return .request(profile: profile.rawValue, properties: properties, body: revision.body,
                        compressed: revision.body.readableBytes > 256)
    }

    /// A norev for a wanted revision that is no longer held (§3 "norev").
    static func noRevMessage(docID: String, revID: String, sequence: UInt64, collectionIndex: Int?) -> BLIPMessage {
        var properties: Properties = ["id": docID, "rev": revID, "sequence": String(sequence), "error": "404",
                                      "reason": "missing"]
        if let collectionIndex { properties["collection"] = String(collectionIndex) }
        return .request(profile: ReplicationProfile.norev.rawValue, properties: properties, noReply: true)
    }

    /// A changes message body: `[[sequence, docID, revID, deleted?, bodySize]]` (§3 "changes").
    static func changesBody(_ entries: [ChangeEntry]) -> ByteBuffer {
        JSONValue.array(entries.map { entry in
            var fields: [JSONValue] = [.number(String(entry.sequence)), .string(entry.docID), .string(entry.revID)]
            fields.append(entry.deleted ? .bool(true) : .number("0"))
            fields.append(.number(String(entry.bodySize)))
            return .array(fields)
        }).jsonBuffer
    }
}
