import BLIPCore
import ReplicationNames

/// What the relay knows about one BLIP message when it asks the policy: enough to decide on its
/// first frame (side, type, number, properties) and, once the message is complete, its body size
/// and attachments. The relay builds one per message; nothing here is computed eagerly, so a
/// message that matches no rule costs no parsing.
public struct MessageFacts: Sendable {
    /// The direction it travels: `.clientToServer` is `from: client`.
    public var direction: BLIPDirection
    /// MSG, RPY or ERR (wire-format reference §2.2).
    public var type: MessageType
    /// The sender's message number (§4.4).
    public var number: UInt64
    /// The request's NoReply flag: a denied noreply request is dropped without an answer.
    public var noReply: Bool
    /// The message's properties (§2.3); `Profile` is read from them.
    public var properties: Properties
    /// `scope.collection` when the relay knows which collection the message is about.
    public var collection: String?
    /// Uncompressed body size, once the message is complete; nil before.
    public var bodySize: Int?
    /// Attachments the body refers to, once the message is complete; nil before (or unknown).
    public var attachments: [AttachmentFacts]?
    /// For a reply (RPY or ERR): the `Profile` of the request it answers, when the relay knows it.
    public var requestProfile: String?

    public init(direction: BLIPDirection, type: MessageType, number: UInt64 = 0, noReply: Bool = false,
                properties: Properties, collection: String? = nil, bodySize: Int? = nil,
                attachments: [AttachmentFacts]? = nil, requestProfile: String? = nil) {
        self.direction = direction
        self.type = type
        self.number = number
        self.noReply = noReply
        self.properties = properties
        self.collection = collection
        self.bodySize = bodySize
        self.attachments = attachments
        self.requestProfile = requestProfile
    }

    /// What `profile:` matches: a request's `Profile` property; for a reply, which carries none,
    /// the profile of the request it answers (so `from: server, profile: getAttachment` matches
    /// the attachment data the server sends back).
    @inlinable public var profile: String? { type == .request ? properties.profile : requestProfile }

    /// The document a message is about: the `id` property (rev, norev, getRev, putRev) or `docID`
    /// (getAttachment, proveAttachment).
    public var docID: String? { properties[.id] ?? properties[.docID] }

    /// The `channels` property of subChanges, split at commas (empty when absent).
    public var channels: [Substring] {
        guard let list = properties[.channels] else { return [] }
        return list.split(separator: ",").map { $0.drop { $0 == " " } }
    }
}

/// One attachment of a message body: its content type and length in bytes.
public struct AttachmentFacts: Sendable, Equatable {
    public var contentType: String?
    public var length: Int

    public init(contentType: String?, length: Int) {
        self.contentType = contentType
        self.length = length
    }
}
