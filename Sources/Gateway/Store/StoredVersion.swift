import Replication

/// A revision's version-vector identity (replication-protocol §4 "Version Vectors"): its current
/// version and the rest of its vector, kept as the text a version-vector peer sent in the rev's
/// `rev` and `history` properties (or as the gateway wrote them for its own edits), and sent on
/// unchanged. Tied to the rev-tree revision the store filed it under, so peers on older
/// sub-protocols still see a revision tree (as Sync Gateway 4 keeps both).
public struct StoredVersion: Sendable, Equatable {
    /// The rev-tree revision this version names in the store.
    public var revID: String
    /// `hextime@sourceID`.
    public var current: String
    /// The vector after the current version: `pv1, pv2` or `mv1, mv2; pv…`; empty when none.
    public var history: String

    public init(revID: String, current: String, history: String) {
        self.revID = revID
        self.current = current
        self.history = history
    }

    /// The whole vector as LiteCore 4 writes it (`cv; pv…`, or `cv, mv…; pv…` for a merge).
    public var vectorText: String {
        if history.isEmpty { return current }
        return history.containsSemicolon ? "\(current), \(history)" : "\(current); \(history)"
    }

    /// The parsed vector; nil if the stored text does not parse (never for what the gateway took in).
    public var vector: VersionVector? { try? VersionVector.parse(vectorText, omitsCurrent: false).get() }
}

extension String {
    fileprivate var containsSemicolon: Bool { utf8.contains(UInt8(ascii: ";")) }
}
