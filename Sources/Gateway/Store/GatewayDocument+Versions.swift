import Replication

/// How a document's current revision relates to versions a version-vector peer names
/// (replication-protocol §4 "Version Vectors"), decided as LiteCore 4 and Sync Gateway 4 decide:
/// a vector that holds the current version's source at the same or a later time succeeds it
/// (LiteCore `VersionVector::compareTo`, Sync Gateway `DominatesSource`). A legacy current
/// revision (no version) is compared through its legacy version, as LiteCore writes it into the
/// vector of an edit made on top of a rev-tree revision (`Version.cc`, legacyVersion).
extension GatewayDocument {
    /// The current revision as a version: its own, or the legacy version of its rev-tree ID.
    var currentAsVersion: Version? {
        if let stored = currentVersion { return try? Version.parse(Substring(stored.current)).get() }
        return (try? TreeRevID.parse(currentRevID).get()).map(Version.legacy)
    }

    /// True when `version` is the current revision or one this document's vector has seen.
    func knows(_ version: Version) -> Bool {
        if let vector = currentVersion?.vector { return vector.dominates(version) }
        return currentAsVersion == version
    }

    /// True when `vector` is the current revision or descends from it.
    func isSucceeded(by vector: VersionVector) -> Bool {
        guard let mine = currentAsVersion else { return false }
        return vector.dominates(mine)
    }

    /// What a version-vector revision arriving in a rev does here.
    enum VersionArrival: Equatable {
        /// This version or a later one is already current.
        case known
        /// It descends from the current revision (or the document is a tombstone): add it.
        case succeeds
        /// Neither descends from the other.
        case conflicts
    }

    func arrival(of vector: VersionVector) -> VersionArrival {
        guard let current = vector.current else { return .conflicts }
        if knows(current) { return .known }
        if isSucceeded(by: vector) || isDeleted { return .succeeds }
        return .conflicts
    }

    /// proposeChanges' answer for a version (Sync Gateway 4 `CheckProposedVersion`, LiteCore 4
    /// `RevFinder::findProposedChange`): 0 send it when `serverRevID` (the version or rev-tree ID
    /// the client last had from here) is current, or the proposed vector succeeds the current
    /// revision, or the document is a tombstone and the client names none; 304 when the version
    /// is known; else 409 with the current version (or rev-tree ID) for `conflictIncludesRev`.
    func proposal(of vector: VersionVector, serverRevID: String?) -> (status: Int, current: String?) {
        guard let current = vector.current else { return (409, versionOrRevID) }
        if let serverRevID, serverRevID == versionOrRevID || serverRevID == currentRevID { return (0, nil) }
        if knows(current) { return (304, nil) }
        if isSucceeded(by: vector) { return (0, nil) }
        if serverRevID == nil, isDeleted { return (0, nil) }
        return (409, versionOrRevID)
    }
}
