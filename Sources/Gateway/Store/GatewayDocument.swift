import NIOCore

/// A document as the in-memory store keeps it: its revision tree, the sequence of its latest
/// change, and the channels its current revision names (Sync Gateway's `channels` property).
public struct GatewayDocument: Sendable {
    public let docID: String
    var tree = RevisionTree()
    /// The database sequence of the document's latest change (replication-protocol §3 "changes").
    public internal(set) var sequence: UInt64 = 0
    /// Channels from the current revision's `channels` property; a tombstone keeps the last ones
    /// so channel-filtered feeds still carry the deletion.
    public internal(set) var channels: [String] = []
    /// For a replicator's local database: the revision last known to be on the remote peer,
    /// sent as proposeChanges' `serverRevID` (replication-protocol §3 "proposeChanges").
    public internal(set) var remoteRevID: String?
    /// The version-vector identity of the revision that was current when it was last set; see
    /// ``currentVersion``.
    var version: StoredVersion?

    init(docID: String) { self.docID = docID }

    /// The current revision's version, when a version-vector peer or a local edit gave it one;
    /// nil for a revision a rev-tree peer wrote (a legacy revision, as Sync Gateway 4 calls it).
    public var currentVersion: StoredVersion? {
        guard let version, version.revID == currentRevID else { return nil }
        return version
    }

    /// What a version-vector peer knows the current revision by: its current version, or its
    /// rev-tree ID when it has none.
    public var versionOrRevID: String { currentVersion?.current ?? currentRevID }

    var current: StoredRevision { tree.winner! }
    public var currentRevID: String { current.revID }
    public var isDeleted: Bool { current.deleted }
    /// The current revision's body exactly as stored.
    public var body: ByteBuffer { current.body ?? ByteBuffer(string: "{}") }
    /// Every revision ID in the tree.
    public var revisionIDs: Set<String> { Set(tree.revisions.keys) }
    /// Live leaves that lost to the current revision: unresolved conflicts.
    public var conflictingRevIDs: [String] { tree.conflictingLeaves }
    /// The current revision's ancestors, parent first.
    public var history: [String] { tree.ancestry(of: currentRevID) }

    func revision(_ revID: String) -> StoredRevision? { tree[revID] }
}
