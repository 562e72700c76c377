import BLIPCore

/// The compiled `match:` of a message rule; every key given must match (an empty match matches
/// every message). Keys are checked cheapest first: side, type and profile (no lookups), then
/// session keys (user, client IP), then property lookups (collection, doc, channel, properties),
/// and only for a complete message the body keys (sizes, attachments).
public struct MessageMatch: Sendable {
    /// `from:` client or server; nil for either.
    public var direction: BLIPDirection?
    /// `type:` request/reply/error; nil for any.
    public var types: [MessageType]?
    /// `profile:` one name or a list; nil for any. A reply matches by the profile of the request it
    /// answers (``MessageFacts/profile``); `type: request` keeps a rule to requests.
    public var profiles: [String]?
    public var collection: TextPattern?
    public var doc: TextPattern?
    /// Matches when any of the message's `channels` matches.
    public var channel: TextPattern?
    /// Matches the session's user; an anonymous session never matches.
    public var user: TextPattern?
    /// Matches when the client address is in any of the blocks.
    public var clientIP: [CIDRBlock]?
    /// Property name → pattern; a missing property does not match.
    public var properties: [(name: String, pattern: TextPattern)] = []
    public var minBodySize: Int?
    public var maxBodySize: Int?
    public var attachment: AttachmentMatch?

    public init() {}

    /// True when the match has keys only a complete message can answer (sizes, attachments).
    public var needsBody: Bool { minBodySize != nil || maxBodySize != nil || attachment != nil }

    /// Checks every key except the body keys. No allocation when side, type or profile rule the
    /// message out.
    @inline(__always)
    public func matchesHead(_ message: MessageFacts, session: SessionFacts) -> Bool {
        if let direction, direction != message.direction { return false }
        if let types, !types.contains(message.type) { return false }
        if let profiles {
            guard let profile = message.profile, profiles.contains(profile) else { return false }
        }
        var lookups = MessageLookups()
        return CompiledMatch(self).matchesRest(message, session: session, lookups: &lookups)
    }

    /// Checks the body keys; call only when ``MessageFacts/bodySize`` is known.
    public func matchesBody(_ message: MessageFacts) -> Bool {
        let size = message.bodySize ?? 0
        if let minBodySize, size < minBodySize { return false }
        if let maxBodySize, size > maxBodySize { return false }
        if let attachment {
            guard let attachments = message.attachments, attachments.contains(where: attachment.matches) else { return false }
        }
        return true
    }
}

/// `attachment:` — matches a message with at least one attachment of this content type and size.
public struct AttachmentMatch: Sendable {
    public var contentType: TextPattern?
    public var minSize: Int?
    public var maxSize: Int?

    public init(contentType: TextPattern? = nil, minSize: Int? = nil, maxSize: Int? = nil) {
        self.contentType = contentType
        self.minSize = minSize
        self.maxSize = maxSize
    }

    public func matches(_ facts: AttachmentFacts) -> Bool {
        if let contentType {
            guard let type = facts.contentType, contentType.matches(type) else { return false }
        }
        if let minSize, facts.length < minSize { return false }
        if let maxSize, facts.length > maxSize { return false }
        return true
    }
}

/// Property reads shared by the rules checked for one message (each read at most once).
struct MessageLookups {
    private var cachedDocID: String??

    mutating func docID(_ message: MessageFacts) -> String? {
        if let cachedDocID { return cachedDocID }
        let id = message.docID
        cachedDocID = .some(id)
        return id
    }
}
