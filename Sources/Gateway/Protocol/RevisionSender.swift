import BLIPCore
import NIOCore
import Replication

/// Builds the messages that carry revisions out, the same way on both peers.
enum RevisionSender {
    /// A rev message for `revision` (replication-protocol §3 "rev"): `id`, `rev`, JSON `sequence`,
    /// comma-separated `history` (current revision omitted, §4), `deleted`, `collection`.
    ///
    /// With `versions` (a version-vector session) a revision that has a version goes out as
    /// LiteCore 4 sends one: `rev` its current version, `history` the rest of its vector as
    /// stored (`pv1, pv2` or `mv1, mv2; pv…`, omitted when empty).
    static func revMessage(docID: String, _ revision: OutgoingRevision, collectionIndex: Int?,
                           noConflicts: Bool = false, profile: ReplicationProfile = .rev,
                           versions: Bool = false, noReply: Bool = false) -> BLIPMessage {
        var properties = Properties([.id: docID, .rev: revision.revID, .sequence: String(revision.sequence)])
        if versions, let version = revision.version {
            properties[.rev] = version.current
            if !version.history.isEmpty { properties[.history] = version.history }
        } else if !revision.history.isEmpty {
            properties[.history] = revision.history.joined(separator: ",")
        }
        if revision.deleted { properties[.deleted] = "true" }
        if noConflicts { properties[.noconflicts] = "true" }
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        return .request(profile: profile.rawValue, properties: properties, body: revision.body,
                        compressed: revision.body.readableBytes > 256, noReply: noReply)
    }

    /// A norev for a wanted revision that is no longer held (§3 "norev").
    static func noRevMessage(docID: String, revID: String, sequence: UInt64, collectionIndex: Int?) -> BLIPMessage {
        var properties = Properties([.id: docID, .rev: revID, .sequence: String(sequence), .error: "404", .reason: "missing"])
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        return .request(profile: ReplicationProfile.norev.rawValue, properties: properties, noReply: true)
    }

    /// A changes message body: `[[sequence, docID, revID, deleted?, bodySize]]` (§3 "changes").
    /// With `versions`, an entry names the revision's current version when it has one (§4).
    static func changesBody(_ entries: [ChangeEntry], versions: Bool = false) -> ByteBuffer {
        JSONValue.array(entries.map { entry in
            let rev = versions ? entry.version ?? entry.revID : entry.revID
            var fields: [JSONValue] = [.number(String(entry.sequence)), .string(entry.docID), .string(rev)]
            fields.append(entry.deleted ? .bool(true) : .number("0"))
            fields.append(.number(String(entry.bodySize)))
            return .array(fields)
        }).jsonBuffer
    }
}
