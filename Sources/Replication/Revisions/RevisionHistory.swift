/// The `history` property of a rev message: the ancestors of its `rev`, current revision
/// omitted (replication-protocol §4). Rev-tree histories are comma-separated and their
/// generations decrease by one; version-vector histories separate the merge versions from the
/// historical ones with `;`.
public enum RevisionHistory: Sendable, Hashable {
    case tree([TreeRevID])
    case vector(VersionVector)

    /// How many revision IDs (or versions) it lists.
    public var count: Int {
        switch self {
        case .tree(let ids): return ids.count
        case .vector(let vector): return vector.count
        }
    }

    /// Parses `text` as the history of `current` (whose syntax decides the history's).
    public static func parse(_ text: String, current: RevID?) -> Result<RevisionHistory, ReplicationError> {
        let isVector: Bool
        switch current {
        case .version: isVector = true
        case .tree: isVector = false
        case nil: isVector = text.containsByte(UInt8(ascii: "@"))
        }
        if isVector { return VersionVector.parse(text, omitsCurrent: true).map(RevisionHistory.vector) }
        return parseTree(text, current: current)
    }

    private static func parseTree(_ text: String, current: RevID?) -> Result<RevisionHistory, ReplicationError> {
        var ids: [TreeRevID] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = String(piece.drop(while: { $0 == " " || $0 == "\t" }))
            switch TreeRevID.parse(trimmed) {
            case .success(let id): ids.append(id)
            case .failure: return .failure(.invalidHistory(text, "\"\(trimmed.prefix(60))\" is not a rev-tree ID"))
            }
        }
        var expected: UInt64?
        if case .tree(let id) = current { expected = id.generation - 1 }
        for id in ids {
            if let generation = expected, id.generation != generation {
                return .failure(.invalidHistory(text, "generation \(id.generation) follows where \(generation) was due"))
            }
            expected = id.generation - 1
        }
        return .success(.tree(ids))
    }
}
