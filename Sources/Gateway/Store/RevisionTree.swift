import NIOCore

/// One revision of a document: its place in the tree, whether it is a tombstone, and its body
/// while it is a leaf (interior revisions keep only their IDs, as Sync Gateway does).
public struct StoredRevision: Sendable, Equatable {
    public let revID: String
    public let generation: UInt64
    public internal(set) var parentRevID: String?
    public internal(set) var deleted: Bool
    /// The body exactly as it arrived (or was created); nil once the revision has a child.
    public internal(set) var body: ByteBuffer?
    /// The database sequence at which this revision was added.
    public internal(set) var sequence: UInt64

    /// The generation of a `generation-digest` revision ID (replication-protocol §4); 0 if malformed.
    static func generation(of revID: String) -> UInt64 {
        guard let dash = revID.firstIndex(of: "-") else { return 0 }
        return UInt64(revID[..<dash]) ?? 0
    }
}

/// A document's revision tree (replication-protocol §4 "Revision Trees"): revisions linked to
/// their parents, the leaves, and the deterministic winner among them. Conflicts are branches:
/// more than one live leaf.
struct RevisionTree: Sendable {
    private(set) var revisions: [String: StoredRevision] = [:]
    private(set) var leaves: Set<String> = []

    func contains(_ revID: String) -> Bool { revisions[revID] != nil }

    subscript(revID: String) -> StoredRevision? { revisions[revID] }

    /// The current revision: a live leaf beats a tombstone, then the higher generation, then the
    /// higher revision ID by string order (the rule CouchDB, Sync Gateway and LiteCore share).
    var winner: StoredRevision? {
        leaves.lazy.compactMap { self.revisions[$0] }.max { Self.ranksBelow($0, $1) }
    }

    /// Live leaves other than the winner: the document's unresolved conflicts.
    var conflictingLeaves: [String] {
        let current = winner?.revID
        return leaves.filter { $0 != current && revisions[$0]?.deleted == false }.sorted()
    }

    static func ranksBelow(_ lhs: StoredRevision, _ rhs: StoredRevision) -> Bool {
        if lhs.deleted != rhs.deleted { return lhs.deleted }
        if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
        return lhs.revID < rhs.revID
    }

    /// Adds `revID` whose ancestors are `history` (parent first, as a rev message lists them).
    /// Unknown ancestors become body-less interior revisions; the nearest known one is the graft
    /// point. Returns false (changing nothing) when `revID` is already present.
    @discardableResult
    mutating func insert(revID: String, history: [String], deleted: Bool, body: ByteBuffer?, sequence: UInt64) -> Bool {
        guard revisions[revID] == nil else { return false }
        var unknown: [String] = []
        var graft: String?
        for ancestor in history {
            if revisions[ancestor] != nil { graft = ancestor; break }
            unknown.append(ancestor)
        }
        var parent = graft
        if let graft { becomeInterior(graft) }
        for ancestor in unknown.reversed() {
            revisions[ancestor] = StoredRevision(revID: ancestor, generation: StoredRevision.generation(of: ancestor),
                                                 parentRevID: parent, deleted: false, body: nil, sequence: sequence)
            parent = ancestor
        }
        revisions[revID] = StoredRevision(revID: revID, generation: StoredRevision.generation(of: revID),
                                          parentRevID: parent, deleted: deleted, body: body, sequence: sequence)
        leaves.insert(revID)
        return true
    }

    private mutating func becomeInterior(_ revID: String) {
        guard leaves.remove(revID) != nil else { return }
        revisions[revID]?.body = nil
    }

    /// The ancestors of `revID`, parent first, stopping after `limit` or at (and including) the
    /// first one in `stopAt` (the peer's known ancestors, replication-protocol §3 "changes").
    func ancestry(of revID: String, limit: Int = .max, stopAt: Set<String> = []) -> [String] {
        var result: [String] = []
        var next = revisions[revID]?.parentRevID
        while let current = next, result.count < limit {
            result.append(current)
            if stopAt.contains(current) { break }
            next = revisions[current]?.parentRevID
        }
        return result
    }
}
