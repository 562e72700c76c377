/// A version vector: the current version, zero or more merge versions, then historical versions
/// after a `;` (replication-protocol §4 "Version Vectors"). A rev message's `history` omits the
/// current version, which travels in `rev`.
public struct VersionVector: Sendable, Hashable {
    public var current: Version?
    public var merges: [Version]
    public var history: [Version]

    public var count: Int { (current == nil ? 0 : 1) + merges.count + history.count }

    /// Parses a vector; with `omitsCurrent`, the versions before `;` are all merge versions.
    public static func parse(_ text: String, omitsCurrent: Bool) -> Result<VersionVector, ReplicationError> {
        let sections = text.split(separator: ";", maxSplits: 2, omittingEmptySubsequences: false)
        guard sections.count <= 2 else { return .failure(.invalidHistory(text, "more than one ';'")) }
        var lists: [[Version]] = []
        for section in sections {
            var versions: [Version] = []
            let trimmedSection = section.trimmingSpaces
            if trimmedSection.isEmpty, sections.count == 2 { lists.append([]); continue }
            for piece in trimmedSection.split(separator: ",", omittingEmptySubsequences: false) {
                switch Version.parse(piece.trimmingSpaces) {
                case .success(let version): versions.append(version)
                case .failure: return .failure(.invalidHistory(text, "\"\(piece.prefix(60))\" is not a version"))
                }
            }
            lists.append(versions)
        }
        var vector: VersionVector
        if sections.count == 1 {
            vector = omitsCurrent ? VersionVector(current: nil, merges: [], history: lists[0])
                : VersionVector(current: lists[0].first, merges: [], history: Array(lists[0].dropFirst()))
        } else {
            var head = lists[0]
            let current = omitsCurrent ? nil : (head.isEmpty ? nil : head.removeFirst())
            vector = VersionVector(current: current, merges: head, history: lists[1])
        }
        if vector.merges.count == 1 {
            return .failure(.invalidHistory(text, "a merge needs at least two merge versions, found one"))
        }
        var sources: Set<Substring> = []
        for version in [vector.current].compactMap({ $0 }) + vector.merges + vector.history
        where !sources.insert(version.sourceID).inserted {
            return .failure(.invalidHistory(text, "source ID \(version.sourceID) appears twice"))
        }
        return .success(vector)
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
