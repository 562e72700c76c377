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
    /// getCheckpoints answered 404 for a client this session saw no checkpoint of: a new client
    /// has none yet, so this is the normal answer and not counted in ``errorsByDomainAndCode``.
    public var newCheckpoints: Int
    /// ERR replies by `domain code`, e.g. `HTTP 409`.
    public var errorsByDomainAndCode: [String: Int]
    /// True when every way the session replicates got to its end: the pull caught up and the
    /// push is done (``pullCaughtUp``, ``pushDone``).
    public var caughtUp: Bool
    /// The pull received the empty `changes` that says it is caught up; nil when there is no pull.
    public var pullCaughtUp: Bool?
    /// Nothing of the push is outstanding and its checkpoint is saved (see `SessionState+Progress`):
    /// every change the client offered or proposed answered, every revision asked for sent and
    /// answered (or refused with norev), and the client's last setCheckpoint, sent after those
    /// answers, succeeded. Nil when there is no push.
    public var pushDone: Bool?
    /// From the session's start to ``caughtUp``.
    public var secondsToCaughtUp: Double?
    public var closes: [CloseRecord]
    public var profiles: [ProfileStats]
    /// Findings by kind, with the running count behind them (a 409 loop's 409s, the revisions
    /// outstanding when a close cut the session short).
    public var findings: [FindingTally]
    public var protocolViolations: Int
    public var findingsDropped: Int
    public var timelineDocumentsEvicted: Int
}

/// Document traffic in one direction.
public struct TransferCounts: Sendable, Equatable, Encodable {
    public var changesMessages = 0
    /// Revisions offered in `changes` and `proposeChanges`.
    public var revisionsOffered = 0
    /// Of ``revisionsOffered``, those offered in `proposeChanges`.
    public var revisionsProposed = 0
    public var revisionsWanted = 0
    public var revisionsNotWanted = 0
    /// Revisions that reached the receiver (whatever it then did with them).
    public var revisionsSent = 0
    /// Revisions the receiver answered with success.
    public var revisionsAccepted = 0
    /// NoReply revisions the receiver showed it kept: a checkpoint it saved after them (and
    /// after their attachments came).
    public var revisionsKept = 0
    /// Revisions the receiver is known to have stored: accepted or kept, less those a later
    /// refusal showed it dropped.
    public var revisionsStored = 0
    /// Revisions the receiver showed it did not store (an attachment of theirs refused).
    public var revisionsNotStored = 0
    /// NoReply revisions whose fate the wire has not shown (yet): sent, not known to be stored.
    public var revisionsUnconfirmed = 0
    /// Refusals the sender got: the receiver's, and the relay's for revisions it withheld.
    public var revisionsRefused = 0
    /// Revisions the relay kept from the receiver and answered itself (a mediation policy denied
    /// them); not in ``revisionsSent``, ``documents`` or ``revisionBytes``, which count what
    /// the receiver got.
    public var revisionsWithheld = 0
    /// Distinct documents the receiver stored a revision of: accepted, or NoReply and kept.
    public var documents = 0
    /// True when more distinct documents passed than `maxDistinctDocumentsCounted`.
    public var documentsCountIsLowerBound = false
    public var tombstones = 0
    /// Offered entries that told the receiver its user no longer sees the document: revoked
    /// (access withdrawn) or removed (the document left the user's channels). Sync Gateway sends
    /// them to a client that subscribed with `revocations=true`; LiteCore purges the document.
    public var revisionsRevoked = 0
    public var revisionBytes = 0
    public var norevs = 0
    public var attachmentsSent = 0
    public var attachmentBytes = 0
    public var attachmentsProven = 0

    public init() {}
}

/// The findings of one kind in a session summary.
public struct FindingTally: Sendable, Equatable, Encodable {
    public var kind: Finding.Kind
    /// Findings of this kind.
    public var findings = 0
    /// What they stand for: the sum of their running counts (a finding without one counts one).
    public var occurrences = 0

    public init(kind: Finding.Kind, findings: Int = 0, occurrences: Int = 0) {
        self.kind = kind
        self.findings = findings
        self.occurrences = occurrences
    }

    mutating func add(_ finding: Finding) {
        findings += 1
        occurrences += finding.count ?? 1
    }

    /// `checkpointConflictLoop×40000`.
    public var text: String { "\(kind.rawValue)×\(occurrences)" }
}

/// How a side closed the WebSocket.
public struct CloseRecord: Sendable, Equatable, Encodable {
    /// `client` or `server`; nil when not known.
    public var from: String?
    /// The CLOSE frame's code; nil when the connection ended without one (a TCP drop).
    public var code: Int?
    public var reason: String
    public var time: Double

    /// True for a connection that ended without a CLOSE frame (no code, or 1006, which
    /// RFC 6455 §7.4.1 reserves for exactly that and never sends).
    public var isDrop: Bool { code == nil || code == 1006 }

    /// `closed by 1011 "reason" from server`, or `dropped without CLOSE by client (TCP RST)`.
    public var summary: String {
        let why = reason.isEmpty ? "" : isDrop ? " (\(reason))" : " \"\(reason)\""
        if isDrop { return "dropped without CLOSE" + (from.map { " by \($0)" } ?? "") + why }
        return "closed by \(code!)\(why)" + (from.map { " from \($0)" } ?? "")
    }
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
