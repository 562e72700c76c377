import Replication

/// A revision's version-vector identity (replication-protocol §4 "Version Vectors"): its current
/// version and the rest of its vector, kept as the text a version-vector peer sent in the rev's
/// `rev` and `history` properties (or as the gateway wrote them for its own edits), and sent on
/// unchanged. Tied to the rev-tree revision the store filed it under, so peers on older
/// sub-protocols still see a revision tree (as Sync Gateway 4 keeps both).
///
/// A document keeps one, its current revision's: the text is bounded by what one rev's
/// properties may hold (``BLIPLimits/maxPropertiesSize``, 100 KiB), plus the gateway's own
/// version when it edits on top (each source appears once in a vector).
public struct StoredVersion: Sendable, Equatable {
    /// The rev-tree revision this version names in the store.
    public let revID: String
    /// `hextime@sourceID`.
    public let current: String
    /// The vector after the current version: `pv1, pv2` or `mv1, mv2; pv…`; empty when none.
    public let history: String
    /// The parsed vector, read once here; nil if the text does not parse (never for what the
    /// gateway took in). Every proposal and rev for the document compares against it.
    public let vector: VersionVector?

    public init(revID: String, current: String, history: String) {
        self.revID = revID
        self.current = current
        self.history = history
        let text = history.isEmpty ? current
            : history.containsSemicolon ? "\(current), \(history)" : "\(current); \(history)"
        vector = try? VersionVector.parse(text, omitsCurrent: false).get()
    }
}

extension String {
    fileprivate var containsSemicolon: Bool { utf8.contains(UInt8(ascii: ";")) }
}
