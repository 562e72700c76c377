/// The `Profile` values of the replication protocol (replication-protocol §3), Connected Client
/// (§3), and the ones real peers send besides (a `PING` keep-alive request).
public enum ReplicationProfile: String, Sendable, CaseIterable, Codable {
    case getCheckpoint, setCheckpoint, getCollections, subChanges, unsubChanges
    case changes, proposeChanges, rev, norev, getAttachment, proveAttachment
    case getRev, putRev
    case ping = "PING"

    /// By length first, then at most three comparisons: every message's profile goes through
    /// here, and the synthesized initializer compares against each case in turn.
    public init?(rawValue: String) {
        switch rawValue.utf8.count {
        case 3 where rawValue == "rev": self = .rev
        case 4 where rawValue == "PING": self = .ping
        case 5 where rawValue == "norev": self = .norev
        case 6 where rawValue == "getRev": self = .getRev
        case 6 where rawValue == "putRev": self = .putRev
        case 7 where rawValue == "changes": self = .changes
        case 10 where rawValue == "subChanges": self = .subChanges
        case 12 where rawValue == "unsubChanges": self = .unsubChanges
        case 13 where rawValue == "getAttachment": self = .getAttachment
        case 13 where rawValue == "getCheckpoint": self = .getCheckpoint
        case 13 where rawValue == "setCheckpoint": self = .setCheckpoint
        case 14 where rawValue == "getCollections": self = .getCollections
        case 14 where rawValue == "proposeChanges": self = .proposeChanges
        case 15 where rawValue == "proveAttachment": self = .proveAttachment
        default: return nil
        }
    }

    /// The profile spelled by raw UTF-8 bytes (a property value), without making a String.
    init?(utf8 bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 3 where bytes.matches("rev"): self = .rev
        case 4 where bytes.matches("PING"): self = .ping
        case 5 where bytes.matches("norev"): self = .norev
        case 6 where bytes.matches("getRev"): self = .getRev
        case 6 where bytes.matches("putRev"): self = .putRev
        case 7 where bytes.matches("changes"): self = .changes
        case 10 where bytes.matches("subChanges"): self = .subChanges
        case 12 where bytes.matches("unsubChanges"): self = .unsubChanges
        case 13 where bytes.matches("getAttachment"): self = .getAttachment
        case 13 where bytes.matches("getCheckpoint"): self = .getCheckpoint
        case 13 where bytes.matches("setCheckpoint"): self = .setCheckpoint
        case 14 where bytes.matches("getCollections"): self = .getCollections
        case 14 where bytes.matches("proposeChanges"): self = .proposeChanges
        case 15 where bytes.matches("proveAttachment"): self = .proveAttachment
        default: return nil
        }
    }

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
