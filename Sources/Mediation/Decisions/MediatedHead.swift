import BLIPCore

/// What the policy sees of a message once its properties have arrived (wire-format reference
/// §2.2): enough to decide before the body is complete.
public struct MediatedHead: Sendable {
    /// The way the message travels.
    public var direction: BLIPDirection
    /// The number as its sender gave it (for a reply: the number its requester gave the request).
    public var number: MessageNumber
    public var type: MessageType
    /// The flags of its first frame, MoreComing cleared (§2.1).
    public var flags: FrameFlags
    public var properties: Properties
    /// For a reply (RPY or ERR): the `Profile` of the request it answers, when known.
    public var requestProfile: String?

    public init(direction: BLIPDirection, number: MessageNumber, type: MessageType, flags: FrameFlags,
                properties: Properties, requestProfile: String? = nil) {
        self.direction = direction
        self.number = number
        self.type = type
        self.flags = flags
        self.properties = properties
        self.requestProfile = requestProfile
    }

    /// The request's `Profile`, or for a reply the profile of the request it answers.
    public var profile: String? { type == .request ? properties.profile : requestProfile }
}
