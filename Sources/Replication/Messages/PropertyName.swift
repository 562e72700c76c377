#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The message properties the typed views read (replication-protocol §3; BLIP §6 for the
/// error properties). ``MessageReader`` collects them in one pass over a message's properties.
enum PropertyName: String, CaseIterable, Sendable {
    case profile = "Profile"
    case errorDomain = "Error-Domain"
    case errorCode = "Error-Code"
    case collection, client, rev, id, deleted, sequence, history, replacedRev, noconflicts
    case digest, docID, ifNotRev, error, reason, maxHistory
    case since, continuous, batch, activeOnly, filter, channels, versioning, sendReplacementRevs

    /// A small non-zero number per name, for packing names into an integer.
    var code: UInt8 {
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

    /// The name spelled by `key`, if it is one of these: by length, then byte comparisons, so
    /// no String is made and no table is touched.
    static func matching(_ key: UnsafeRawBufferPointer) -> PropertyName? {
        switch key.count {
        case 2:
            if key.matches("id") { return .id }
        case 3:
            if key.matches("rev") { return .rev }
        case 5:
            if key.matches("docID") { return .docID }
            if key.matches("error") { return .error }
            if key.matches("since") { return .since }
            if key.matches("batch") { return .batch }
        case 6:
            if key.matches("client") { return .client }
            if key.matches("digest") { return .digest }
            if key.matches("reason") { return .reason }
            if key.matches("filter") { return .filter }
        case 7:
            if key.matches("Profile") { return .profile }
            if key.matches("deleted") { return .deleted }
            if key.matches("history") { return .history }
        case 8:
            if key.matches("sequence") { return .sequence }
            if key.matches("ifNotRev") { return .ifNotRev }
            if key.matches("channels") { return .channels }
        case 10:
            if key.matches("Error-Code") { return .errorCode }
            if key.matches("collection") { return .collection }
            if key.matches("maxHistory") { return .maxHistory }
            if key.matches("continuous") { return .continuous }
            if key.matches("activeOnly") { return .activeOnly }
            if key.matches("versioning") { return .versioning }
        case 11:
            if key.matches("replacedRev") { return .replacedRev }
            if key.matches("noconflicts") { return .noconflicts }
        case 12:
            if key.matches("Error-Domain") { return .errorDomain }
        case 19:
            if key.matches("sendReplacementRevs") { return .sendReplacementRevs }
        default: break
        }
        return nil
    }
}

extension UnsafeRawBufferPointer {
    /// True when these bytes are exactly `text`'s UTF-8: one `memcmp`, not a checked loop over
    /// each byte (property names and profiles are matched several times per message).
    func matches(_ text: StaticString) -> Bool {
        let length = text.utf8CodeUnitCount
        guard count == length else { return false }
        guard length > 0, let base = baseAddress else { return true }
        return memcmp(base, text.utf8Start, length) == 0
    }
}
