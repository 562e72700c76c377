/// The `Profile` values of the replication protocol (replication-protocol §3), Connected Client
/// (§3), and the ones real peers send besides (a `PING` keep-alive request).
public enum ReplicationProfile: String, Sendable, CaseIterable, Codable {
    case getCheckpoint, setCheckpoint, getCollections, subChanges, unsubChanges
    case changes, proposeChanges, rev, norev, getAttachment, proveAttachment
    case getRev, putRev
    case ping = "PING"

    /// The profile named `rawValue`, found by its length, then at most three comparisons
    /// (``NameTable``): every message's profile goes through here, and the synthesized
    /// initializer compares against each case in turn.
    public init?(rawValue: String) {
        var name = rawValue
        guard let found = name.withUTF8({ Self.table.lookup(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = found
    }

    /// The profile spelled by raw UTF-8 bytes (a property value), without making a String.
    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard let found = Self.table.lookup(bytes) else { return nil }
        self = found
    }

    /// Every profile by its name's bytes; the names are the cases' raw values, spelled once.
    private static let table = NameTable(allCases.map { ($0.rawValue, $0) })

    /// The case's position in `allCases`, for tables indexed by profile.
    public var ordinal: Int {
        switch self {
        case .getCheckpoint: return 0
        case .setCheckpoint: return 1
        case .getCollections: return 2
        case .subChanges: return 3
        case .unsubChanges: return 4
        case .changes: return 5
        case .proposeChanges: return 6
        case .rev: return 7
        case .norev: return 8
        case .getAttachment: return 9
        case .proveAttachment: return 10
        case .getRev: return 11
        case .putRev: return 12
        case .ping: return 13
        }
    }

    /// Whether the replication reading of a success reply to a request of this profile reads the
    /// reply's body (§3): the checkpoint, the collections, the answers to changes and
    /// proposeChanges, the proof, the revision. The other replies are read from their size
    /// (getAttachment's is the attachment) or carry nothing.
    public var repliesAreRead: Bool {
        switch self {
        case .getCheckpoint, .setCheckpoint, .getCollections, .changes, .proposeChanges, .proveAttachment, .getRev:
            return true
        case .subChanges, .unsubChanges, .rev, .norev, .getAttachment, .putRev, .ping:
            return false
        }
    }

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
