import ReplicationNames

/// A way a message breaks the replication protocol (replication-protocol §3–§5), with a sentence
/// a user can read. The module's one error type: parsers collect these instead of throwing so a
/// malformed message is still shown with whatever could be read from it.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case invalidJSON(what: String, detail: String)
        case wrongShape(what: String, expected: String)
        case bodyTooLarge(what: String, size: Int, limit: Int)
        case missingProperty(profile: String, name: PropertyName)
        case invalidProperty(profile: String, name: PropertyName, value: String, expected: String)
        case invalidRevID(value: String, detail: String)
        case invalidHistory(value: String, detail: String)
        case collectionOutOfRange(index: Int, known: Int)
        case collectionInLegacyMode(profile: String)
        case collectionMissingInCollectionMode(profile: String)
        case replyCountMismatch(profile: String, entries: Int, answers: Int)
        case unexpectedReply(number: UInt64)
    }

    private let reason: Reason

    private init(_ reason: Reason) { self.reason = reason }

    static func invalidJSON(_ what: String, _ detail: String) -> Self { Self(.invalidJSON(what: what, detail: detail)) }
    static func wrongShape(_ what: String, expected: String) -> Self { Self(.wrongShape(what: what, expected: expected)) }
    static func bodyTooLarge(_ what: String, size: Int, limit: Int) -> Self {
        Self(.bodyTooLarge(what: what, size: size, limit: limit))
    }
    static func missingProperty(_ profile: String, _ name: PropertyName) -> Self {
        Self(.missingProperty(profile: profile, name: name))
    }
    static func invalidProperty(_ profile: String, _ name: PropertyName, _ value: String, expected: String) -> Self {
        Self(.invalidProperty(profile: profile, name: name, value: value, expected: expected))
    }
    static func invalidRevID(_ value: String, _ detail: String) -> Self { Self(.invalidRevID(value: value, detail: detail)) }
    static func invalidHistory(_ value: String, _ detail: String) -> Self {
        Self(.invalidHistory(value: value, detail: detail))
    }
    static func collectionOutOfRange(_ index: Int, known: Int) -> Self {
        Self(.collectionOutOfRange(index: index, known: known))
    }
    static func collectionInLegacyMode(_ profile: String) -> Self { Self(.collectionInLegacyMode(profile: profile)) }
    static func collectionMissing(_ profile: String) -> Self { Self(.collectionMissingInCollectionMode(profile: profile)) }
    static func replyCountMismatch(_ profile: String, entries: Int, answers: Int) -> Self {
        Self(.replyCountMismatch(profile: profile, entries: entries, answers: answers))
    }
    static func unexpectedReply(_ number: UInt64) -> Self { Self(.unexpectedReply(number: number)) }

    /// True for the collection-mode rules of §5 (legacy vs collection-aware).
    public var isCollectionModeViolation: Bool {
        switch reason {
        case .collectionInLegacyMode, .collectionMissingInCollectionMode: return true
        default: return false
        }
    }

    public var description: String {
        switch reason {
        case .invalidJSON(let what, let detail):
            return "\(what) is not valid JSON (\(detail))"
        case .wrongShape(let what, let expected):
            return "\(what) should be \(expected)"
        case .bodyTooLarge(let what, let size, let limit):
            return "\(what) of \(size) bytes exceeds the \(limit)-byte analysis limit; not parsed"
        case .missingProperty(let profile, let name):
            return "\(profile) lacks its required \"\(name.rawValue)\" property"
        case .invalidProperty(let profile, let name, let value, let expected):
            return "\(profile) property \(name.rawValue)=\"\(value.prefix(80))\" should be \(expected)"
        case .invalidRevID(let value, let detail):
            return "revision ID \"\(value.prefix(80))\" is invalid: \(detail)"
        case .invalidHistory(let value, let detail):
            return "revision history \"\(value.prefix(120))\" is invalid: \(detail)"
        case .collectionOutOfRange(let index, let known):
            return "collection index \(index) is outside the \(known) collection(s) resolved by getCollections"
        case .collectionInLegacyMode(let profile):
            return "\(profile) carries a collection property on a legacy (getCheckpoint-first) connection"
        case .collectionMissingInCollectionMode(let profile):
            return "\(profile) lacks the collection property on a collection-aware (getCollections-first) connection"
        case .replyCountMismatch(let profile, let entries, let answers):
            return "\(profile) reply has \(answers) items for a request of \(entries)"
        case .unexpectedReply(let number):
            return "reply #\(number) answers no pending request"
        }
    }
}
