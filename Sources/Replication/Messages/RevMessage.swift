import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        docID = reader.string(.id)
        revID = reader.string(.rev)
        deleted = reader.bool(.deleted)
        sequence = reader.json(property: .sequence)
        history = reader.string(.history)
        historyCount = 0
        replacedRev = reader.string(.replacedRev)
        noConflicts = reader.bool(.noconflicts)
        bodyBytes = reader.body.readableBytes
        // The body is parsed only when it must be: a missing id/rev, or attachments to list.
        if docID == nil || revID == nil || Self.mentionsAttachments(reader.body) || Self.mentionsBlobs(reader.body) {
            readBody(&reader)
        }
        if docID == nil { reader.report(.missingProperty(profile, .id)) }
        let current: RevID?
        if let revID { current = reader.checkRevID(revID) } else {
            current = nil
            reader.report(.missingProperty(profile, .rev))
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

    /// Reads `_id`, `_rev`, `_deleted` and the attachments from the body: with one scanning pass
    /// when it can, or a full parse when the body holds blobs (nested anywhere, ``DocumentBlobs``).
    private mutating func readBody(_ reader: inout MessageReader) {
        let blobs = Self.mentionsBlobs(reader.body)
        if !blobs, reader.bodyIsScannable, let fields = RevBodyFields.scan(reader.body) {
            apply(fields, reader: &reader)
            return
        }
        guard let body = reader.jsonBody(required: !deleted), let members = body.objectValue else {
            if reader.body.readableBytes > 0, reader.violations.isEmpty {
                reader.report(.wrongShape("\(profile) body", expected: "a JSON object"))
            }
            return
        }
        let fields = RevBodyFields(id: members["_id"]?.stringValue, rev: members["_rev"]?.stringValue,
                                   deleted: members["_deleted"]?.isTruthy == true, attachments: members["_attachments"])
        apply(fields, reader: &reader)
        guard blobs else { return }
        for blob in DocumentBlobs.references(in: body) where !attachments.contains(where: { $0.digest == blob.digest }) {
            attachments.append(blob)
        }
    }

    private mutating func apply(_ fields: RevBodyFields, reader: inout MessageReader) {
        if docID == nil { docID = fields.id }
        if revID == nil { revID = fields.rev }
        if fields.deleted { deleted = true }
        guard let attachments = fields.attachments else { return }
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
                name: name, digest: digest, length: meta["length"]?.intValue, isStub: meta["stub"]?.isTruthy ?? false,
                contentType: meta["content_type"]?.stringValue))
        }
    }

    /// A byte search, so bodies without attachments are never parsed.
    public static func mentionsAttachments(_ body: ByteBuffer) -> Bool { mentions("\"_attachments\"", in: body) }

    /// Whether the body may hold a blob dictionary (an `"@type"` key), found the same way.
    public static func mentionsBlobs(_ body: ByteBuffer) -> Bool { mentions("\"@type\"", in: body) }

    /// Whether `key` (a quoted JSON key) occurs in `body`. `memchr` finds the key's second byte
    /// (`_` or `@`, rare in JSON bodies) and the key is compared only there.
    private static func mentions(_ key: StaticString, in body: ByteBuffer) -> Bool {
        body.withUnsafeReadableBytes { bytes in
            let length = key.utf8CodeUnitCount
            let marker = key.utf8Start[1]
            guard bytes.count >= length, let base = bytes.baseAddress else { return false }
            var index = 1
            let last = bytes.count - length + 1
            while index <= last {
                guard let hit = memchr(base + index, Int32(marker), last - index + 1) else { return false }
                index = base.distance(to: UnsafeRawPointer(hit))
                if UnsafeRawBufferPointer(rebasing: bytes[(index - 1)..<(index - 1 + length)]).matches(key) { return true }
                index += 1
            }
            return false
        }
    }
}

/// An attachment named in a revision's `_attachments` (§3 "getAttachment": the digest is the
/// key peers ask for).
public struct AttachmentReference: Sendable, Equatable, Codable {
    /// The `_attachments` key, or a blob's path in the body (``DocumentBlobs``).
    public var name: String
    public var digest: String
    public var length: Int?
    /// True when only metadata is included (`stub: true`).
    public var isStub: Bool
    /// `content_type`, when given.
    public var contentType: String?

    public init(name: String, digest: String, length: Int?, isStub: Bool, contentType: String? = nil) {
        self.name = name
        self.digest = digest
        self.length = length
        self.isStub = isStub
        self.contentType = contentType
    }
}
