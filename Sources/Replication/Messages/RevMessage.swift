import NIOCore

/// rev (and Connected Client's putRev): one document revision with its metadata
/// (replication-protocol §3 "rev"; Connected Client §3.3). `id`, `rev` and `deleted` may instead
/// come from the body's `_id`, `_rev`, `_deleted`.
public struct RevMessage: Sendable, Equatable {
    public var profile: String
    public var collection: Int?
    public var docID: String?
    public var revID: String?
    public var deleted: Bool
    /// JSON-encoded in the property; required when the rev is unsolicited (§3).
    public var sequence: JSONValue?
    /// The history as sent (current revision omitted); nil when absent.
    public var history: String?
    /// How many revision IDs `history` lists.
    public var historyCount: Int
    /// Set when this rev replaces the requested one (sendReplacementRevs).
    public var replacedRev: String?
    public var noConflicts: Bool
    public var bodyBytes: Int
    /// The `_attachments` of the body, when it has any.
    public var attachments: [AttachmentReference] = []

    init(reading reader: inout MessageReader) {
        profile = reader.profile
        collection = reader.collection()
        docID = reader.string("id")
        revID = reader.string("rev")
        deleted = reader.bool("deleted")
        sequence = reader.json(property: "sequence")
        history = reader.string("history")
        historyCount = 0
        replacedRev = reader.string("replacedRev")
        noConflicts = reader.bool("noconflicts")
        bodyBytes = reader.body.readableBytes
        // The body is parsed only when it must be: a missing id/rev, or attachments to list.
        if docID == nil || revID == nil || Self.mentionsAttachments(reader.body) {
            readBody(&reader)
        }
        if docID == nil { reader.report(.missingProperty(profile, "id")) }
        let current: RevID?
        if let revID { current = reader.checkRevID(revID) } else {
            current = nil
            reader.report(.missingProperty(profile, "rev"))
        }
        if let history, !history.isEmpty {
            switch RevisionHistory.parse(history, current: current) {
            case .success(let parsed): historyCount = parsed.count
            case .failure(let error):
                reader.report(error)
                historyCount = history.split(separator: ",").count
            }
        }
    }

    private mutating func readBody(_ reader: inout MessageReader) {
        guard let body = reader.jsonBody(required: !deleted), let members = body.objectValue else {
            if reader.body.readableBytes > 0, reader.violations.isEmpty {
                reader.report(.wrongShape("\(profile) body", expected: "a JSON object"))
            }
            return
        }
        if docID == nil { docID = members["_id"]?.stringValue }
        if revID == nil { revID = members["_rev"]?.stringValue }
        if members["_deleted"]?.isTruthy == true { deleted = true }
        guard let attachments = members["_attachments"] else { return }
        guard let entries = attachments.objectValue else {
            reader.report(.wrongShape("_attachments", expected: "a JSON object"))
            return
        }
        for name in entries.keys.sorted() {
            let meta = entries[name]!
            guard let digest = meta["digest"]?.stringValue else {
                reader.report(.wrongShape("attachment \"\(name)\"", expected: "an object with a digest"))
                continue
            }
            self.attachments.append(AttachmentReference(
                name: name, digest: digest, length: meta["length"]?.intValue, isStub: meta["stub"]?.isTruthy ?? false))
        }
    }

    private static let attachmentsKey = Array("\"_attachments\"".utf8)

    /// A byte search, so bodies without attachments are never parsed.
    static func mentionsAttachments(_ body: ByteBuffer) -> Bool {
        body.withUnsafeReadableBytes { bytes in
            let key = attachmentsKey
            guard bytes.count >= key.count else { return false }
            var index = 0
            let last = bytes.count - key.count
            while index <= last {
                if bytes[index] == key[0] {
                    var offset = 1
                    while offset < key.count, bytes[index + offset] == key[offset] { offset += 1 }
                    if offset == key.count { return true }
                }
                index += 1
            }
            return false
        }
    }
}

/// An attachment named in a revision's `_attachments` (§3 "getAttachment": the digest is the
/// key peers ask for).
public struct AttachmentReference: Sendable, Equatable, Codable {
    public var name: String
    public var digest: String
    public var length: Int?
    /// True when only metadata is included (`stub: true`).
    public var isStub: Bool
}
