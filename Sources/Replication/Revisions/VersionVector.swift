/// A version vector: the current version, zero or more merge versions, then historical versions
/// after a `;` (replication-protocol §4 "Version Vectors"). A rev message's `history` omits the
/// current version, which travels in `rev`.
///
/// LiteCore 4 writes a vector as `cv; pv1, pv2` (or `cv, mv1, mv2; pv…` for a merge, with a
/// trailing `;` when nothing follows the merge versions); its changes and proposeChanges entries
/// carry the whole vector where a rev-tree peer puts a revision ID (docs/litecore-behaviour.md).
public struct VersionVector: Sendable, Hashable {
    public var current: Version?
    public var merges: [Version]
    public var history: [Version]

    public init(current: Version?, merges: [Version] = [], history: [Version] = []) {
        self.current = current
        self.merges = merges
        self.history = history
    }

    public var count: Int { (current == nil ? 0 : 1) + merges.count + history.count }

    /// Every version, current first.
    public var versions: [Version] { [current].compactMap { $0 } + merges + history }

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
        // LiteCore allows the current version's source once more among the merge versions (an
        // older version of its own that was merged), never anywhere else (VersionVector.cc).
        var sources: Set<Substring> = []
        for version in vector.merges + vector.history where !sources.insert(version.sourceID).inserted {
            return .failure(.invalidHistory(text, "source ID \(version.sourceID) appears twice"))
        }
        if let current = vector.current, sources.contains(current.sourceID) {
            guard vector.merges.contains(where: { $0.sourceID == current.sourceID }) else {
                return .failure(.invalidHistory(text, "source ID \(current.sourceID) appears twice"))
            }
        }
        return .success(vector)
    }

    /// The current version's text when `text` is a whole vector (`cv; pv…` or `cv, mv…; pv…`),
    /// nil for a single version or a rev-tree ID: what changes and proposeChanges entries name.
    public static func currentVersionText(of text: String) -> String? {
        let utf8 = text.utf8
        guard text.containsByte(UInt8(ascii: "@")),
              let end = utf8.firstIndex(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") }) else { return nil }
        return String(Substring(text[..<end]).trimmingSpaces)
    }

    /// True when this vector holds `version`'s source at the same or a later time: the revision
    /// named by `version` is this one or one of its ancestors (LiteCore `VersionVector::compareTo`,
    /// Sync Gateway `DominatesSource`).
    public func dominates(_ version: Version) -> Bool {
        versions.contains { $0.sourceID == version.sourceID && $0.timestamp >= version.timestamp }
    }

    /// The text LiteCore writes: `cv; pv1, pv2`, `cv, mv1, mv2; pv…`, or `cv, mv1, mv2;`.
    public var text: String {
        guard let current else { return historyText }
        if merges.isEmpty { return history.isEmpty ? current.description : "\(current); \(historyText)" }
        return "\(current), \(historyText)"
    }

    /// What follows the current version in a rev message's `history` (LiteCore cuts the vector's
    /// text after the current version and its separator): `pv1, pv2`, or `mv1, mv2; pv…`.
    public var historyText: String {
        let past = history.map(\.description).joined(separator: ", ")
        if merges.isEmpty { return past }
        let merged = merges.map(\.description).joined(separator: ", ")
        return past.isEmpty ? merged + ";" : merged + "; " + past
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
