/// getCheckpoint: asks the receiver for the checkpoint stored under `client`
/// (replication-protocol §3 "getCheckpoint").
public struct GetCheckpointRequest: Sendable, Equatable {
    public var client: String?
    public var collection: Int?

    init(reading reader: inout MessageReader) {
        client = reader.required(.client)
        collection = reader.collection()
    }
}

/// A stored checkpoint: its MVCC `rev` (not a document revision ID) and its JSON body, as a
/// getCheckpoint reply carries it (§3 "getCheckpoint").
public struct Checkpoint: Sendable, Equatable {
    public var rev: String?
    public var body: JSONValue?

    init(reading reader: inout MessageReader) {
        rev = reader.string(.rev)
        body = reader.jsonBody(required: false)
        if let body, body.objectValue == nil { reader.report(.wrongShape("checkpoint body", expected: "a JSON object")) }
    }

    init(rev: String?, body: JSONValue?) {
        self.rev = rev
        self.body = body
    }
}

/// setCheckpoint: stores `body` under `client`; `rev` is the last known MVCC revision, absent
/// for a new checkpoint (§3 "setCheckpoint"). A stale `rev` fails the request (409).
public struct SetCheckpointRequest: Sendable, Equatable {
    public var client: String?
    public var rev: String?
    public var collection: Int?
    public var body: JSONValue?

    init(reading reader: inout MessageReader) {
        client = reader.required(.client)
        rev = reader.string(.rev)
        collection = reader.collection()
        body = reader.jsonBody()
        if let body, body.objectValue == nil { reader.report(.wrongShape("checkpoint body", expected: "a JSON object")) }
    }
}

/// setCheckpoint's reply: the checkpoint's new MVCC revision (§3 "setCheckpoint").
public struct SetCheckpointReply: Sendable, Equatable {
    public var rev: String?

    init(reading reader: inout MessageReader) {
        rev = reader.required(.rev)
    }
}

/// One key of a checkpoint body that changed between two versions of it.
public struct CheckpointChange: Sendable, Equatable, Codable {
    public var key: String
    /// Compact JSON of the old and new values; nil when absent.
    public var old: String?
    public var new: String?

    /// The keys whose values differ between `old` and `new` checkpoint bodies, sorted.
    public static func diff(from old: JSONValue?, to new: JSONValue?) -> [CheckpointChange] {
        let before = old?.objectValue ?? [:]
        let after = new?.objectValue ?? [:]
        return Set(before.keys).union(after.keys).sorted().compactMap { key in
            before[key] == after[key] ? nil
                : CheckpointChange(key: key, old: before[key]?.description, new: after[key]?.description)
        }
    }
}

extension SetCheckpointRequest {
    /// A setCheckpoint `rev` as the analyzer writes it: `rev 7-a`; `rev ""` for the empty value
    /// LiteCore sends for a new checkpoint (which Sync Gateway takes as no rev); `rev (new)`
    /// when the property is absent.
    static func revText(_ rev: String?) -> String {
        guard let rev else { return "rev (new)" }
        return rev.isEmpty ? "rev \"\"" : "rev \(rev)"
    }
}
