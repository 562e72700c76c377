/// The `Profile` values of the replication protocol (replication-protocol §3), Connected Client
/// (§3), and the ones real peers send besides (a `PING` keep-alive request).
public enum ReplicationProfile: String, Sendable, CaseIterable, Codable {
    case getCheckpoint, setCheckpoint, getCollections, subChanges, unsubChanges
    case changes, proposeChanges, rev, norev, getAttachment, proveAttachment
    case getRev, putRev
    case ping = "PING"

    /// Profiles that take a `collection` index on a collection-aware connection (§3, §5).
    public var takesCollection: Bool {
        switch self {
        case .getCheckpoint, .setCheckpoint, .subChanges, .changes, .proposeChanges, .rev, .norev,
             .getAttachment, .proveAttachment:
            return true
        case .getCollections, .unsubChanges, .getRev, .putRev, .ping:
            return false
        }
    }
}
