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
    public static func parse(_ text: String, versioning: Versioning? = nil) -> Result<RevID, ReplicationError> {
        switch versioning {
        case .revTrees: return TreeRevID.parse(text).map(RevID.tree)
        case .versionVectors: return Version.parse(Substring(text)).map(RevID.version)
        case nil:
            // A byte search: `String.contains(String)` goes through Foundation and dominated profiles.
            if text.containsByte(UInt8(ascii: "@")) { return Version.parse(Substring(text)).map(RevID.version) }
            return TreeRevID.parse(text).map(RevID.tree)
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
