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

        /// True for the kinds `stuckFindings(now:)` reports.
        public var isStuckReason: Bool {
            switch self {
            case .unansweredRequest, .revNeverArrived, .unansweredRev, .pausedOnAck, .notCaughtUp,
                 .revisionRefusedRepeatedly, .checkpointConflictLoop:
                return true
            default:
                return false
            }
        }
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

    public init(kind: Kind, connection: Int, time: Double, side: BLIPDirection? = nil, profile: String? = nil,
                number: MessageNumber? = nil, docID: String? = nil, message: String) {
        self.kind = kind
        self.connection = connection
        self.time = time
        self.side = side
        self.profile = profile
        self.number = number
        self.docID = docID
        self.message = message
    }

    public var description: String {
        let by = side.map { " by \($0)" } ?? ""
        switch kind {
        case .protocolViolation, .mixedCollectionModes: return "protocol violation\(by): \(message)"
        default: return "\(kind.rawValue)\(by): \(message)"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, conn, time, side, profile, number, docID, message, summary
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
        try container.encode(description, forKey: .summary)
    }
}
