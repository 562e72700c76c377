#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The message properties of the replication protocol (replication-protocol §3; BLIP §6 for the
/// error properties): the one place each name is spelled. Replication's `MessageReader`
/// collects them in one pass over a message's properties.
public enum PropertyName: String, CaseIterable, Sendable {
    case profile = "Profile"
    case errorDomain = "Error-Domain"
    case errorCode = "Error-Code"
    case collection, client, rev, id, deleted, sequence, history, replacedRev, noconflicts
    case digest, docID, ifNotRev, error, reason, maxHistory
    case since, continuous, batch, activeOnly, filter, channels, versioning, sendReplacementRevs

    /// A small non-zero number per name, for packing names into an integer.
    public var code: UInt8 {
        switch self {
        case .profile: return 1
        case .errorDomain: return 2
        case .errorCode: return 3
        case .collection: return 4
        case .client: return 5
        case .rev: return 6
        case .id: return 7
        case .deleted: return 8
        case .sequence: return 9
        case .history: return 10
        case .replacedRev: return 11
        case .noconflicts: return 12
        case .digest: return 13
        case .docID: return 14
        case .ifNotRev: return 15
        case .error: return 16
        case .reason: return 17
        case .maxHistory: return 18
        case .since: return 19
        case .continuous: return 20
        case .batch: return 21
        case .activeOnly: return 22
        case .filter: return 23
        case .channels: return 24
        case .versioning: return 25
        case .sendReplacementRevs: return 26
        }
    }

    /// The name spelled by `key`, if it is one of these: by length, then byte comparisons
    /// (``NameTable``), so no String is made.
    public static func matching(_ key: UnsafeRawBufferPointer) -> PropertyName? { table.lookup(key) }

    /// Every name by its bytes; the names are the cases' raw values, spelled once.
    private static let table = NameTable(allCases.map { ($0.rawValue, $0) })
}

extension UnsafeRawBufferPointer {
    /// True when these bytes are exactly `text`'s UTF-8: one `memcmp`, not a checked loop over
    /// each byte (property names and profiles are matched several times per message).
    public func matches(_ text: StaticString) -> Bool {
        let length = text.utf8CodeUnitCount
        guard count == length else { return false }
        guard length > 0, let base = baseAddress else { return true }
        return memcmp(base, text.utf8Start, length) == 0
    }

    /// True when these bytes are exactly `name`'s spelling (a property key read in place): the
    /// lengths first, then one `memcmp`, as for a literal.
    public func matches(_ name: PropertyName) -> Bool {
        var text = name.rawValue
        guard count == text.utf8.count else { return false }
        guard count > 0, let base = baseAddress else { return true }
        return text.withUTF8 { memcmp(base, $0.baseAddress!, count) == 0 }
    }
}
