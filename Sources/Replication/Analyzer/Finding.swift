import BLIPCore

/// Something wrong in a session: a protocol violation by one side, or a reason it is stuck.
public struct Finding: Sendable, Equatable, Encodable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case protocolViolation
        case mixedCollectionModes
        case unansweredRequest
        case revNeverArrived
        case unansweredRev
        case pausedOnAck
        case notCaughtUp
        case revisionRefusedRepeatedly
        case checkpointConflictLoop
        case sharedCheckpointClient
        case limitReached
        /// The session ended (a CLOSE or a drop) while revisions were still on their way: one
        /// finding for all of them, naming the close, instead of one per revision.
        case closedMidTransfer
        /// A NoReply rev its receiver could not store: a getAttachment for one of its attachments
        /// was refused (Sync Gateway's 403 "Attachment's doc not being synced"), so the receiver
        /// dropped the document.
        case revisionNotStored

        /// True for the kinds a live session can be stuck for: `stuckFindings(now:)` reports them
        /// and the relay's `blipscope_stuck_sessions` gauge counts them.
        public var isStuckReason: Bool {
            switch self {
            case .unansweredRequest, .revNeverArrived, .unansweredRev, .pausedOnAck, .notCaughtUp,
                 .revisionRefusedRepeatedly, .checkpointConflictLoop:
                return true
            default:
                return false
            }
        }

        /// True for a condition raised by a message that goes on while messages repeat it (a
        /// setCheckpoint 409 loop, a revision refused again and again): it is reported once, when
        /// first made, and then keeps a running ``Finding/count`` until it stops holding
        /// (``Finding/endTime``).
        public var isStanding: Bool { self == .checkpointConflictLoop || self == .revisionRefusedRepeatedly }
    }

    public var kind: Kind
    public var connection: Int
    public var time: Double
    /// The side at fault (violations) or the side that stalls; nil when it is both or unknown.
    public var side: BLIPDirection?
    public var profile: String?
    public var number: MessageNumber?
    public var docID: String?
    public var message: String
    /// How many times the condition has happened so far (a standing finding's running count:
    /// 409s in a row, refusals), or what a collapsed finding stands for (revisions outstanding at
    /// the close); nil for a single event.
    public var count: Int?
    /// When a standing condition stopped holding (the next setCheckpoint succeeded, the
    /// revision was taken); nil while it holds, and for other findings.
    public var endTime: Double?

    public init(kind: Kind, connection: Int, time: Double, side: BLIPDirection? = nil, profile: String? = nil,
                number: MessageNumber? = nil, docID: String? = nil, message: String, count: Int? = nil) {
        self.kind = kind
        self.connection = connection
        self.time = time
        self.side = side
        self.profile = profile
        self.number = number
        self.docID = docID
        self.message = message
        self.count = count
    }

    /// True while the condition holds: a standing finding not ended, or a finding about the
    /// session's state at the time it was asked for.
    public var holds: Bool { endTime == nil }

    public var description: String {
        let by = side.map { " by \($0)" } ?? ""
        switch kind {
        case .protocolViolation, .mixedCollectionModes: return "protocol violation\(by): \(message)"
        default:
            guard kind.isStanding, let count else { return "\(kind.rawValue)\(by): \(message)" }
            return "\(kind.rawValue)\(by): \(message) (\(count) times\(holds ? "" : ", then it stopped"))"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, conn, time, side, profile, number, docID, message, count, endTime, summary
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(connection, forKey: .conn)
        try container.encode(time, forKey: .time)
        try container.encodeIfPresent(side?.description, forKey: .side)
        try container.encodeIfPresent(profile, forKey: .profile)
        try container.encodeIfPresent(number, forKey: .number)
        try container.encodeIfPresent(docID, forKey: .docID)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(count, forKey: .count)
        try container.encodeIfPresent(endTime, forKey: .endTime)
        try container.encode(description, forKey: .summary)
    }
}
