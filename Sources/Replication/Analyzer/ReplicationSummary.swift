/// What a session did, in replication terms, for `inspect --summary` and the relay's close log.
/// "Pushed" counts what the active peer (the WebSocket client) sent; "pulled" what it received.
public struct ReplicationSummary: Sendable, Equatable, Encodable {
    public var connection: Int
    public var subprotocol: String?
    public var user: String?
    public var startTime: Double?
    public var endTime: Double?
    public var durationSeconds: Double?
    /// `push`, `pull`, `pushAndPull`, or `none`.
    public var replicationType: String
    /// From subChanges' `continuous`; nil when no subChanges was seen.
    public var continuous: Bool?
    /// `legacy`, `collectionAware` or `undetermined` (replication-protocol §5).
    public var collectionMode: String
    public var collections: [String]
    public var versioning: String?
    public var messagesFromClient: Int
    public var messagesFromServer: Int
    public var bytesFromClient: Int
    public var bytesFromServer: Int
    public var pushed: TransferCounts
    public var pulled: TransferCounts
    public var conflicts: Int
    public var checkpointConflicts: Int
    /// ERR replies by `domain code`, e.g. `HTTP 409`.
    public var errorsByDomainAndCode: [String: Int]
    public var caughtUp: Bool
    public var secondsToCaughtUp: Double?
    public var closes: [CloseRecord]
    public var profiles: [ProfileStats]
    public var protocolViolations: Int
    public var findingsDropped: Int
    public var timelineDocumentsEvicted: Int
}

/// Document traffic in one direction.
public struct TransferCounts: Sendable, Equatable, Encodable {
    public var changesMessages = 0
    public var revisionsOffered = 0
    public var revisionsProposed = 0
    public var revisionsWanted = 0
    public var revisionsNotWanted = 0
    public var revisionsSent = 0
    public var revisionsAccepted = 0
    public var revisionsRefused = 0
    public var documents = 0
    /// True when more distinct documents passed than `maxDistinctDocumentsCounted`.
    public var documentsCountIsLowerBound = false
    public var tombstones = 0
    public var revisionBytes = 0
    public var norevs = 0
    public var attachmentsSent = 0
    public var attachmentBytes = 0
    public var attachmentsProven = 0

    public init() {}
}

/// How a side closed the WebSocket.
public struct CloseRecord: Sendable, Equatable, Encodable {
    public var from: String?
    public var code: Int?
    public var reason: String
    public var time: Double
}

/// Requests, replies and latency of one profile.
public struct ProfileStats: Sendable, Equatable, Encodable {
    public var profile: String
    public var requests = 0
    public var replies = 0
    public var errors = 0
    public var noReply = 0
    public var latencyMin: Double?
    public var latencyMax: Double?
    public var latencyTotal: Double = 0

    public var latencyAverage: Double? { replies + errors == 0 ? nil : latencyTotal / Double(replies + errors) }

    mutating func recordAnswer(latency: Double, isError: Bool) {
        if isError { errors += 1 } else { replies += 1 }
        latencyTotal += latency
        latencyMin = min(latencyMin ?? latency, latency)
        latencyMax = max(latencyMax ?? latency, latency)
    }

    private enum CodingKeys: String, CodingKey {
        case profile, requests, replies, errors, noReply, latencyMin, latencyMax, latencyAverage
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(profile, forKey: .profile)
        try container.encode(requests, forKey: .requests)
        try container.encode(replies, forKey: .replies)
        try container.encode(errors, forKey: .errors)
        try container.encode(noReply, forKey: .noReply)
        try container.encodeIfPresent(latencyMin, forKey: .latencyMin)
        try container.encodeIfPresent(latencyMax, forKey: .latencyMax)
        try container.encodeIfPresent(latencyAverage, forKey: .latencyAverage)
    }
}
