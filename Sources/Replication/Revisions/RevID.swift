/// How a database names revisions; the active peer picks it with subChanges' `versioning`
/// property (replication-protocol §3 "subChanges", §4).
public enum Versioning: String, Sendable, Hashable, Codable {
    case revTrees = "rev-trees"
    case versionVectors = "version-vectors"
}

/// A revision ID in either syntax of §4: a rev-tree ID or a version-vector version.
public enum RevID: Sendable, Hashable, CustomStringConvertible {
    case tree(TreeRevID)
    case version(Version)

    /// Parses `text` in the syntax `versioning` calls for, or in whichever fits when nil.
    /// A whole vector (what LiteCore 4 puts in changes and proposeChanges entries) reads as its
    /// current version. Version-vector sessions carry rev-tree IDs too, for documents last
    /// written by a rev-tree peer, so `.versionVectors` takes either syntax.
    public static func parse(_ text: String, versioning: Versioning? = nil) -> Result<RevID, ReplicationError> {
        // A byte search: `String.contains(String)` goes through Foundation and dominated profiles.
        let isVersion = text.containsByte(UInt8(ascii: "@"))
        switch versioning {
        case .revTrees: return TreeRevID.parse(text).map(RevID.tree)
        case .versionVectors, nil:
            guard isVersion else { return TreeRevID.parse(text).map(RevID.tree) }
            if VersionVector.currentVersionText(of: text) != nil {
                return VersionVector.parse(text, omitsCurrent: false).flatMap { vector in
                    guard let current = vector.current else {
                        return .failure(.invalidRevID(text, "the vector has no current version"))
                    }
                    return .success(.version(current))
                }
            }
            return Version.parse(Substring(text)).map(RevID.version)
        }
    }

    public var description: String {
        switch self {
        case .tree(let id): return id.description
        case .version(let version): return version.description
        }
    }

    public var abbreviated: String {
        switch self {
        case .tree(let id): return id.abbreviated
        case .version(let version): return version.abbreviated
        }
    }

    /// A short form of any revision ID text, valid or not, for log lines.
    static func abbreviate(_ text: String) -> String {
        if let id = try? parse(text).get() { return id.abbreviated }
        return text.count > 16 ? text.prefix(12) + "…" : text
    }
}

extension String {
    /// True when the UTF-8 form holds `byte`: a loop over contiguous bytes, not a generic
    /// `contains` (nor Foundation's, which `String.contains(String)` resolves to).
    func containsByte(_ byte: UInt8) -> Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.contains(byte) }) { return found }
        return utf8.contains(byte)
    }
}
