import NIOCore
import Replication

/// A revision arriving from a peer in a rev or putRev message (replication-protocol §3 "rev").
public struct IncomingRevision: Sendable, Equatable {
    public var docID: String
    public var revID: String {
        didSet { vector = Self.vector(current: revID, history: versionHistory) }
    }
    /// Ancestors, parent first (the `history` property, current revision omitted, §4).
    public var history: [String]
    public var deleted: Bool
    /// The body exactly as received; stored and sent on unchanged.
    public var body: ByteBuffer
    /// Set for a version-vector revision (replication-protocol §4): `revID` is then its current
    /// version, this the rest of its vector as the `history` property carried it (`pv1, pv2` or
    /// `mv1, mv2; pv…`, possibly empty), and `history` is unused.
    public var versionHistory: String? {
        didSet { vector = Self.vector(current: revID, history: versionHistory) }
    }
    /// The whole vector of a version-vector revision, parsed once (the receiver's check, the
    /// conflict check before attachments and the insert all read it); nil for a rev-tree one or
    /// bad text.
    public private(set) var vector: VersionVector?

    public init(docID: String, revID: String, history: [String] = [], deleted: Bool = false, body: ByteBuffer,
                versionHistory: String? = nil) {
        self.docID = docID
        self.revID = revID
        self.history = history
        self.deleted = deleted
        self.body = body
        self.versionHistory = versionHistory
        vector = Self.vector(current: revID, history: versionHistory)
    }

    private static func vector(current: String, history: String?) -> VersionVector? {
        guard let history else { return nil }
        return StoredVersion(revID: "", current: current, history: history).vector
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
            if revision.versionHistory != nil { return try Self.insertVersion(revision, existing: existing, &state, collection) }
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

    /// Why `revision` cannot be added with `noConflicts` (a version-vector revision always is
    /// checked so), or nil when it can: lets a receiver refuse before fetching attachments.
    func conflict(for revision: IncomingRevision, in collection: CollectionPath, noConflicts: Bool) -> String? {
        guard let existing = document(revision.docID, in: collection) else { return nil }
        if revision.versionHistory != nil {
            guard let vector = revision.vector else { return nil }
            guard existing.arrival(of: vector) == .conflicts else { return nil }
            return "Document revision conflict: \(revision.revID) does not descend from \(existing.versionOrRevID)"
        }
        guard noConflicts, !existing.revisionIDs.contains(revision.revID), !existing.isDeleted || !revision.history.isEmpty,
              !revision.history.contains(existing.currentRevID) else { return nil }
        return "Document revision conflict: \(revision.revID) does not descend from \(existing.currentRevID)"
    }

    /// A version-vector revision: known when its version (or a later one) is current; added on
    /// top of the current revision when its vector succeeds it, under a rev-tree ID derived as
    /// for a local edit so rev-tree peers see it too; a conflict (409) otherwise, whatever
    /// `noConflicts` says, since a vector cannot branch a revision tree.
    private static func insertVersion(_ revision: IncomingRevision, existing: GatewayDocument?, _ state: inout State,
                                      _ collection: CollectionPath) throws(GatewayError) -> InsertOutcome {
        guard let vector = revision.vector else {
            throw .badRequest("\(revision.revID) with history \"\(revision.versionHistory ?? "")\" is not a version vector")
        }
        if let existing {
            switch existing.arrival(of: vector) {
            case .known: return .alreadyKnown
            case .conflicts:
                throw .conflict("Document revision conflict: \(revision.revID) does not descend from the current version \(existing.versionOrRevID) of \(revision.docID)")
            case .succeeds: break
            }
        }
        let parent = existing?.currentRevID
        let revID = RevisionDigest.revID(parent: parent, deleted: revision.deleted, body: revision.body)
        if existing?.tree.contains(revID) == true { return .alreadyKnown }
        let history = existing.map { [$0.currentRevID] + $0.history } ?? []
        let version = StoredVersion(revID: revID, current: revision.revID, history: revision.versionHistory ?? "")
        let sequence = commit(&state, collection, docID: revision.docID, revID: revID, history: history,
                              deleted: revision.deleted, body: revision.body, version: version)
        return .added(sequence: sequence)
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
            let version = state.clock.nextVersion(revID: revID, after: existing?.currentVersion?.vector,
                                                  previousRevID: existing?.currentRevID)
            _ = Self.commit(&state, collection, docID: docID, revID: revID, history: history, deleted: deleted, body: body,
                            version: version)
            return revID
        }
    }

    /// Adds a revision under the next sequence and updates the document's channels.
    /// `version` becomes the document's when the revision becomes current (nil then marks a
    /// rev-tree revision with no version).
    static func commit(_ state: inout State, _ collection: CollectionPath, docID: String, revID: String,
                       history: [String], deleted: Bool, body: ByteBuffer, version: StoredVersion? = nil) -> UInt64 {
        state.lastSequence += 1
        let sequence = state.lastSequence
        var document = state.stores[collection]!.documents[docID] ?? GatewayDocument(docID: docID)
        document.tree.insert(revID: revID, history: history, deleted: deleted, body: body, sequence: sequence)
        if document.currentRevID == revID { document.version = version }
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
