/// What the session analyzer keeps and when it calls a replication stuck. Times are seconds.
/// Every store is bounded so a session that lasts days keeps bounded memory.
public struct AnalyzerLimits: Sendable, Equatable {
    /// Documents whose timeline is kept; the least recently active are evicted first.
    public var maxTimelineDocuments = 10_000
    /// Events kept per document (the latest ones).
    public var maxEventsPerDocument = 64
    /// A timeline idle for longer than this is evicted.
    public var timelineMaxAge: Double = 6 * 3600
    /// When set, only these documents get timelines (cheap `inspect --doc`).
    public var trackedDocuments: Set<String>?
    /// Requests awaiting a reply, per session.
    public var maxPendingRequests = 20_000
    /// Wanted revisions awaiting their rev or norev.
    public var maxOutstandingRevs = 100_000
    /// Protocol-violation findings kept (later ones are counted only).
    public var maxFindings = 1_000
    /// Checkpoint events kept per checkpoint client ID.
    public var maxCheckpointEvents = 200
    /// Distinct document IDs counted per direction for the summary.
    public var maxDistinctDocumentsCounted = 100_000
    /// Revisions whose refusals are counted.
    public var maxRefusalsTracked = 10_000
    /// Message bodies larger than this are not parsed as JSON.
    public var maxJSONBodyBytes = 16 * 1024 * 1024

    /// Stuck: a request without reply for this long (rev has its own threshold).
    public var requestTimeout: Double = 30
    /// Stuck: a revision wanted in a changes reply that has not arrived (as rev or norev).
    public var revArrivalTimeout: Double = 60
    /// Stuck: a rev without reply for this long.
    public var revReplyTimeout: Double = 60
    /// Stuck: a message paused on ACK flow control for this long.
    public var pausedTimeout: Double = 10
    /// Stuck: a one-shot pull with no caught-up (empty changes) after this long without changes.
    public var caughtUpTimeout: Double = 60
    /// Stuck: the same revision refused this many times.
    public var repeatedRefusalThreshold = 3
    /// A 409 loop: this many setCheckpoint conflicts in a row for one client ID.
    public var checkpointConflictLoopThreshold = 3

    public init() {}

    public static let `default` = AnalyzerLimits()
}
