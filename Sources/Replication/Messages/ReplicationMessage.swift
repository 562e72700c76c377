import BLIPCore
import NIOCore

/// A BLIP message seen as the replication protocol defines it: which profile, its typed
/// properties and body, and the protocol violations found in it (replication-protocol §3).
/// Replies are typed by the request they answer; unknown profiles are shown generically.
public struct ReplicationMessage: Sendable {
    /// The typed content: one case per request and reply shape of §3 and Connected Client.
    ///
    /// The cases that carry a read shape are `indirect` (boxed): the enum stays 17 bytes and a
    /// message 120, so it moves between the analyzer, its request box and its events as a small
    /// value. Held inline, the largest shape made the enum 160 bytes and a message 256, and each
    /// copy or match on the way (a dozen per round trip on small messages) a `memcpy` of them.
    public enum Content: Sendable, Equatable {
        indirect case getCheckpoint(GetCheckpointRequest)
        indirect case checkpoint(Checkpoint)
        indirect case setCheckpoint(SetCheckpointRequest)
        indirect case setCheckpointReply(SetCheckpointReply)
        indirect case getCollections(GetCollectionsRequest)
        indirect case getCollectionsReply(GetCollectionsReply)
        indirect case subChanges(SubChangesRequest)
        indirect case unsubChanges(UnsubChangesRequest)
        indirect case changes(ChangesRequest)
        indirect case changesReply(ChangesReply)
        indirect case proposeChanges(ProposeChangesRequest)
        indirect case proposeChangesReply(ProposeChangesReply)
        /// rev or putRev.
        indirect case rev(RevMessage)
        indirect case norev(NoRevMessage)
        indirect case getAttachment(GetAttachmentRequest)
        /// getAttachment's reply: the attachment's size.
        case attachment(bytes: Int)
        indirect case proveAttachment(ProveAttachmentRequest)
        indirect case proveAttachmentReply(ProveAttachmentReply)
        indirect case getRev(GetRevRequest)
        indirect case getRevReply(GetRevReply)
        case ping
        /// A success reply whose profile defines no content (rev, subChanges, norev…).
        case emptyReply
        indirect case error(ErrorReply)
        case generic(GenericMessage)
    }

    public var type: MessageType
    public var number: MessageNumber
    /// The request's profile (also for replies); nil when the request had none or is unknown.
    public var profile: String? {
        didSet { knownProfile = profile.flatMap(ReplicationProfile.init(rawValue:)) }
    }
    /// ``profile`` as a known value, if it is one; looked up once, when the message is typed.
    public private(set) var knownProfile: ReplicationProfile?
    public var content: Content
    /// The `collection` index and, once getCollections is known, its `scope.collection` name.
    public var collection: Int?
    public var collectionName: String?
    public var bodyBytes: Int
    public var violations: [ReplicationError]
    /// The request a reply answers, kept in the analyzer's box; read it in place
    /// (``RequestBox/withMessage(_:)``), ``request`` copies it out.
    var requestBox: RequestBox?

    /// The request this reply answers, when it was given.
    public var request: ReplicationMessage? { requestBox?.message }
}

// The initializers live here so that the struct keeps its memberwise initializer, which builds
// the value in place (an explicit one assigns each field of a stack copy, then copies it out).
extension ReplicationMessage {
    /// Types `message`. For a reply pass the request it answers (its number, other direction);
    /// without it a reply is shown generically.
    public init(_ message: BLIPMessage, answering request: ReplicationMessage? = nil,
                context: MessageContext = MessageContext()) {
        self = Self.typing(message, answering: request.map(RequestBox.init), context: context)
    }

    /// Types `message`, for a reply with its request already boxed (the analyzer keeps pending
    /// requests so, and a reply then shares the box instead of allocating one).
    ///
    /// Only a message with something to read gets a ``MessageReader``: a request of an unknown
    /// profile (or none) and most replies are typed from their size and their request alone.
    /// A function rather than an initializer: an initializer copies the whole message once more
    /// on return, and takes `message` owned, which costs the caller a copy.
    static func typing(_ message: BLIPMessage, answering requestBox: RequestBox?,
                       context: MessageContext) -> ReplicationMessage {
        // The request is read through its box, never copied out of it.
        let (profile, knownProfile) = message.type == .request ? MessageReader.profile(of: message)
                                                                : (requestBox?.profile, requestBox?.knownProfile)
        let content: Content
        var violations: [ReplicationError] = []
        if let unread = Self.unreadContent(message, profile: knownProfile, request: requestBox) {
            content = unread
        } else {
            var reader = MessageReader(profile: profile ?? "message", message: message, context: context)
            switch message.type {
            case .request: content = Self.requestContent(&reader, profile: knownProfile)
            case .error: content = .error(ErrorReply(reading: &reader))
            default: content = Self.replyContent(&reader, request: requestBox)
            }
            violations = reader.violations
        }
        let collection = message.type == .request ? content.collectionIndex : requestBox?.collection
        var collectionName: String?
        if let collection, collection < context.collections.count {
            collectionName = context.collections[collection].description
        }
        return ReplicationMessage(type: message.type, number: message.number, profile: profile, knownProfile: knownProfile,
                                  content: content, collection: collection, collectionName: collectionName,
                                  bodyBytes: message.bodyLength, violations: violations, requestBox: requestBox)
    }

    /// The content of a message that takes nothing to read but its size, else nil: a request of
    /// an unknown profile or none, and a success reply to one (or to no request seen), to
    /// getAttachment (the attachment's size), or to a request whose reply has no content (§3).
    private static func unreadContent(_ message: BLIPMessage, profile: ReplicationProfile?,
                                      request: RequestBox?) -> Content? {
        switch message.type {
        case .request: return profile == nil ? generic(message) : nil
        case .error: return nil
        default:
            // A request of an unknown profile (or none) was typed generic.
            guard let profile = request?.knownProfile else { return generic(message) }
            if profile == .getAttachment { return .attachment(bytes: message.bodyLength) }
            // The replies ``replyContent(_:request:)`` reads.
            return profile.repliesAreRead ? nil : .emptyReply
        }
    }

    private static func generic(_ message: BLIPMessage) -> Content {
        .generic(GenericMessage(propertyCount: message.properties.count, bodyBytes: message.bodyLength))
    }

    /// Whether typing a message reads its body, from what is known once its properties are in:
    /// its type, its `Profile` as a known value (nil: unknown or none) and, for a reply, the known
    /// profile of the request it answers (nil: a request of an unknown profile or none, or no
    /// request seen). A receiver whose only reader of bodies is this typing need not keep the
    /// others (``DirectionDecoder/stopKeepingBody(of:number:)``): they are read from their size.
    public static func readsBody(of type: MessageType, profile: ReplicationProfile?,
                                 answering requestProfile: ReplicationProfile?) -> Bool {
        switch type {
        case .request: return profile != nil
        case .error: return true
        default: return requestProfile?.repliesAreRead ?? false
        }
    }

    /// A request of a known profile (``unreadContent(_:profile:request:)`` types the others).
    private static func requestContent(_ reader: inout MessageReader, profile: ReplicationProfile?) -> Content {
        guard let profile else {
            return .generic(GenericMessage(propertyCount: reader.properties.count, bodyBytes: reader.body.readableBytes))
        }
        switch profile {
        case .getCheckpoint: return .getCheckpoint(GetCheckpointRequest(reading: &reader))
        case .setCheckpoint: return .setCheckpoint(SetCheckpointRequest(reading: &reader))
        case .getCollections: return .getCollections(GetCollectionsRequest(reading: &reader))
        case .subChanges: return .subChanges(SubChangesRequest(reading: &reader))
        case .unsubChanges: return .unsubChanges(UnsubChangesRequest(reading: &reader))
        case .changes: return .changes(ChangesRequest(reading: &reader))
        case .proposeChanges: return .proposeChanges(ProposeChangesRequest(reading: &reader))
        case .rev, .putRev: return .rev(RevMessage(reading: &reader))
        case .norev: return .norev(NoRevMessage(reading: &reader))
        case .getAttachment: return .getAttachment(GetAttachmentRequest(reading: &reader))
        case .proveAttachment: return .proveAttachment(ProveAttachmentRequest(reading: &reader))
        case .getRev: return .getRev(GetRevRequest(reading: &reader))
        case .ping: return .ping
        }
    }

    /// A success reply with content to read (``unreadContent(_:profile:request:)`` types the others).
    private static func replyContent(_ reader: inout MessageReader, request: RequestBox?) -> Content {
        switch request?.message.content {
        case .getCheckpoint: return .checkpoint(Checkpoint(reading: &reader))
        case .setCheckpoint: return .setCheckpointReply(SetCheckpointReply(reading: &reader))
        case .getCollections(let sent):
            return .getCollectionsReply(GetCollectionsReply(reading: &reader, requested: sent.collections.count))
        case .changes(let sent):
            return .changesReply(ChangesReply(reading: &reader, requested: sent.entries.count))
        case .proposeChanges(let sent):
            return .proposeChangesReply(ProposeChangesReply(reading: &reader, requested: sent.entries.count))
        case .proveAttachment: return .proveAttachmentReply(ProveAttachmentReply(reading: &reader))
        case .getRev: return .getRevReply(GetRevReply(reading: &reader))
        default: return .emptyReply
        }
    }
}

/// Holds a typed message out of line: a reply's request (a struct cannot contain itself), a
/// pending request, an analyzed message.
///
/// Read single fields as `box.message.field`. To hand the whole message on, use
/// ``withMessage(_:)``: passing `box.message` as an argument copies all of it first.
final class RequestBox: Sendable {
    let message: ReplicationMessage
    init(_ message: consuming ReplicationMessage) { self.message = message }

    /// Single fields, read without copying the whole message out of the box.
    var profile: String? { message.profile }
    var knownProfile: ReplicationProfile? { message.knownProfile }
    var collection: Int? { message.collection }

    /// Lends the message to `body` in place.
    func withMessage<T>(_ body: (borrowing ReplicationMessage) -> T) -> T { body(message) }
}

extension ReplicationMessage.Content {
    /// The `collection` property a request carried.
    var collectionIndex: Int? {
        switch self {
        case .getCheckpoint(let request): return request.collection
        case .setCheckpoint(let request): return request.collection
        case .subChanges(let request): return request.collection
        case .unsubChanges(let request): return request.collection
        case .changes(let request): return request.collection
        case .proposeChanges(let request): return request.collection
        case .rev(let rev): return rev.collection
        case .norev(let norev): return norev.collection
        case .getAttachment(let request): return request.collection
        case .proveAttachment(let request): return request.collection
        default: return nil
        }
    }
}
