import BLIPCore

/// One step in a document's journey through a session (replication-protocol §5): offered,
/// wanted or not and why, rev sent, accepted or refused, norev, attachments asked and proven.
public struct TimelineEvent: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Codable {
        case offered, proposed, wanted, notWanted, refused
        case revSent, revAccepted, revRefused, noRev
        /// A NoReply rev its receiver showed it kept (a checkpoint saved after it), or showed it
        /// did not store (a getAttachment for it refused): Sync Gateway sends revs NoReply, so
        /// nothing else on the wire tells (docs/sync-gateway-behaviour.md).
        case revKept, revNotStored
        /// A rev the relay kept from its receiver and answered itself (a mediation policy).
        case revWithheld
        case attachmentRequested, attachmentSent, attachmentProofRequested, attachmentProven
        case revRequested, revReturned
    }

    public var connection: Int
    public var time: Double
    /// Who sent the message this event comes from.
    public var from: BLIPDirection
    public var type: MessageType
    public var number: MessageNumber
    public var profile: String
    public var docID: String
    public var kind: Kind
    public var revID: String?
    public var sequence: JSONValue?
    /// Why (not wanted, refused, norev), or an attachment digest.
    public var note: String?
    public var bytes: Int?
    public var historyCount: Int?
    public var attachmentCount: Int?
    public var deleted = false
    public var latency: Double?
    /// The collection (`scope.collection`) of a session that named collections with
    /// getCollections; nil in a legacy session.
    public var collection: String?

    init(connection: Int, time: Double, from: BLIPDirection, type: MessageType, number: MessageNumber,
         profile: String, docID: String, kind: Kind, revID: String? = nil) {
        self.connection = connection
        self.time = time
        self.from = from
        self.type = type
        self.number = number
        self.profile = profile
        self.docID = docID
        self.kind = kind
        self.revID = revID
    }

    /// One line, e.g. `rev 3-a1b2… sent (1.2 KB, hist 2, 1 attachment)`.
    public var summary: String {
        let rev = revID.map(RevID.abbreviate) ?? "?"
        let why = note.map { ": \($0)" } ?? ""
        switch kind {
        case .offered:
            return "offered in changes #\(number) (rev \(rev)\(sequence.map { ", seq \($0)" } ?? "")\(deleted ? ", deleted" : ""))"
        case .proposed:
            return "proposed in proposeChanges #\(number) (rev \(rev)\(note.map { ", peer has \(RevID.abbreviate($0))" } ?? ""))"
        case .wanted: return "\(rev) wanted in \(profile) reply #\(number)\(why)"
        case .notWanted: return "\(rev) not wanted in \(profile) reply #\(number)\(why)"
        case .refused: return "\(rev) refused in \(profile) reply #\(number)\(why)"
        case .revSent: return "\(profile) \(rev) sent (\(revDetails))"
        case .revAccepted: return "\(profile) \(rev) accepted\(latencyText)"
        case .revRefused: return "\(profile) \(rev) refused\(why)\(latencyText)"
        case .noRev: return "norev \(rev)\(why)"
        case .revKept: return "\(profile) \(rev) kept by its receiver\(why)"
        case .revNotStored: return "\(profile) \(rev) not stored by its receiver\(why)"
        case .revWithheld: return "\(profile) \(rev) kept from the receiver by the relay"
        case .attachmentRequested: return "getAttachment \(note ?? "?")"
        case .attachmentSent: return "attachment \(note ?? "?") sent (\(ByteCount.format(bytes ?? 0)))"
        case .attachmentProofRequested: return "proveAttachment \(note ?? "?")"
        case .attachmentProven: return "attachment \(note ?? "?") proven"
        case .revRequested: return "getRev #\(number)"
        case .revReturned: return "getRev reply \(rev)\(bytes.map { " (\(ByteCount.format($0)))" } ?? "")"
        }
    }

    private var revDetails: String {
        var parts = [ByteCount.format(bytes ?? 0)]
        if let historyCount { parts.append("hist \(historyCount)") }
        if let attachmentCount, attachmentCount > 0 {
            parts.append("\(attachmentCount) attachment" + (attachmentCount == 1 ? "" : "s"))
        }
        if deleted { parts.append("deleted") }
        return parts.joined(separator: ", ")
    }

    private var latencyText: String {
        guard let latency else { return "" }
        return latency < 1 ? " after \(Int((latency * 1000).rounded())) ms" : " after \((latency * 10).rounded() / 10) s"
    }

    private enum CodingKeys: String, CodingKey {
        case conn, time, from, type, number, profile, docID, event, revID, sequence, note, bytes, history,
             attachments, deleted, latency, collection, summary
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(connection, forKey: .conn)
        try container.encode(time, forKey: .time)
        try container.encode(from.description, forKey: .from)
        try container.encode(type.description, forKey: .type)
        try container.encode(number, forKey: .number)
        try container.encode(profile, forKey: .profile)
        try container.encode(docID, forKey: .docID)
        try container.encode(kind, forKey: .event)
        try container.encodeIfPresent(revID, forKey: .revID)
        try container.encodeIfPresent(sequence?.description, forKey: .sequence)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encodeIfPresent(bytes, forKey: .bytes)
        try container.encodeIfPresent(historyCount, forKey: .history)
        try container.encodeIfPresent(attachmentCount, forKey: .attachments)
        if deleted { try container.encode(true, forKey: .deleted) }
        try container.encodeIfPresent(latency, forKey: .latency)
        try container.encodeIfPresent(collection, forKey: .collection)
        try container.encode(summary, forKey: .summary)
    }
}
