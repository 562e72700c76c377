import NIOCore
import Replication

/// A revision arriving from a peer in a rev or putRev message (replication-protocol §3 "rev").
public struct IncomingRevision: Sendable, Equatable {
    public var docID: String
    public var revID: String
    /// Ancestors, parent first (the `history` property, current revision omitted, §4).
    public var history: [String]
    public var deleted: Bool
    /// The body exactly as received; stored and sent on unchanged.
    public var body: ByteBuffer

    public init(docID: String, revID: String, history: [String] = [], deleted: Bool = false, body: ByteBuffer) {
        self.docID = docID
        self.revID = revID
        self.history = history
        self.deleted = deleted
        self.body = body
    }
}

/// What inserting a revision did.
public enum InsertOutcome: Sendable, Equatable {
    case added(sequence: UInt64)
    /// The revision was already in the tree; nothing changed.
    case alreadyKnown
}

/// An attachment given with a local edit; stored by digest, named in the body's `_attachments`.
public struct Attachment: Sendable, Equatable {
    public var contentType: String
    public var data: [UInt8]

    public init(contentType: String = "application/octet-stream", data: [UInt8]) {
        self.contentType = contentType
        self.data = data
    }
}

extension GatewayDatabase {
    /// Adds a revision received from a peer, with its history. With `noConflicts` (rev's
    /// `noconflicts`, or a conflict-free database) the revision must descend from the current
    /// one, or the document must not exist (or be a tombstone) when the history is empty;
    /// otherwise it is a 409 conflict (replication-protocol §3 "rev"). Attachments must already
    /// be stored.
    @discardableResult
    public func insert(_ revision: IncomingRevision, in collection: CollectionPath = defaultCollection,
                       noConflicts: Bool = false) throws(GatewayError) -> InsertOutcome {
        try write { state throws(GatewayError) in
            let existing = try Self.store(&state, collection).documents[revision.docID]
            if let existing, existing.tree.contains(revision.revID) { return .alreadyKnown }
            if noConflicts, let existing, !existing.isDeleted || !revision.history.isEmpty,
               !revision.history.contains(existing.currentRevID) {
                throw .conflict("Document revision conflict: \(revision.revID) does not descend from the current revision \(existing.currentRevID) of \(revision.docID)")
            }
            let sequence = Self.commit(&state, collection, docID: revision.docID, revID: revision.revID,
                                       history: revision.history, deleted: revision.deleted, body: revision.body)
            return .added(sequence: sequence)
        }
    }

    /// A local edit: a new revision of `docID` with `body` (and `attachments`, stored by digest
    /// and described in `_attachments`). `basedOn`, when given, must be the current revision
    /// (409 otherwise); nil edits whatever is current. Returns the new revision ID.
    @discardableResult
    public func put(_ docID: String, body: [String: JSONValue], attachments: [String: Attachment] = [:],
                    basedOn: String? = nil, in collection: CollectionPath = defaultCollection) throws(GatewayError) -> String {
        var members = body
        if !attachments.isEmpty {
            var described = members["_attachments"]?.objectValue ?? [:]
            for (name, attachment) in attachments {
                let digest = storeAttachment(attachment.data)
                described[name] = .object([
                    "content_type": .string(attachment.contentType), "digest": .string(digest),
                    "length": .number(String(attachment.data.count)), "stub": .bool(true),
                ])
            }
            members["_attachments"] = .object(described)
        }
        return try edit(docID, body: JSONValue.object(members).jsonBuffer, deleted: false, basedOn: basedOn, in: collection)
    }

    /// A local deletion: a tombstone revision with an empty body. Returns its revision ID.
    @discardableResult
    public func delete(_ docID: String, basedOn: String? = nil,
                       in collection: CollectionPath = defaultCollection) throws(GatewayError) -> String {
        try edit(docID, body: ByteBuffer(string: "{}"), deleted: true, basedOn: basedOn, in: collection)
    }

    /// Records that the remote peer has `revID` of `docID` (a replicator's bookkeeping).
    public func setRemoteRevID(_ revID: String, for docID: String, in collection: CollectionPath = defaultCollection) {
        withState { $0.stores[collection]?.documents[docID]?.remoteRevID = revID }
    }

    private func edit(_ docID: String, body: ByteBuffer, deleted: Bool, basedOn: String?,
                      in collection: CollectionPath) throws(GatewayError) -> String {
        try write { state throws(GatewayError) in
            let existing = try Self.store(&state, collection).documents[docID]
            if let basedOn, basedOn != existing?.currentRevID {
                throw .conflict("\(docID) is at \(existing?.currentRevID ?? "no revision"), not \(basedOn)")
            }
            if deleted, existing == nil || existing!.isDeleted { throw .notFound("\(docID) is missing or deleted") }
            let parent = existing?.currentRevID
            let revID = RevisionDigest.revID(parent: parent, deleted: deleted, body: body)
            let history = existing.map { [$0.currentRevID] + $0.history } ?? []
            _ = Self.commit(&state, collection, docID: docID, revID: revID, history: history, deleted: deleted, body: body)
            return revID
        }
    }

    /// Adds a revision under the next sequence and updates the document's channels.
    static func commit(_ state: inout State, _ collection: CollectionPath, docID: String, revID: String,
                       history: [String], deleted: Bool, body: ByteBuffer) -> UInt64 {
        state.lastSequence += 1
        let sequence = state.lastSequence
        var document = state.stores[collection]!.documents[docID] ?? GatewayDocument(docID: docID)
        document.tree.insert(revID: revID, history: history, deleted: deleted, body: body, sequence: sequence)
        document.sequence = sequence
        let current = document.current
        if let channels = RevisionDigest.channels(in: current.body) {
            document.channels = channels
        } else if !current.deleted {
            document.channels = []
        }
        state.stores[collection]!.documents[docID] = document
        state.stores[collection]!.changeLog.append((sequence: sequence, docID: docID))
        return sequence
    }
}
