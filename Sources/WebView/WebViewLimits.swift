/// The bounds of what the web view keeps and sends, as named configuration. Everything a peer or
/// a viewer can grow is capped here; the worst case is
/// `(maxLiveSessions + maxClosedSessions) × maxMessagesPerSession` message records (each about
/// 200 bytes) and, per session, at most ``maxCopiedBytesPerSession`` of body previews and
/// property copies, ``maxAnalysisBytesPerSession`` of the analyzer's readings and
/// ``maxSyncGatewayLogBytesPerSession`` of Sync Gateway's lines: with the defaults,
/// 120 × (10,000 × (~200 B + 800 B) + 2 MiB + 1 MiB) ≈ 1.57 GB. An ordinary session fills
/// far less (a 10,000-message pull: ~2 MB of records, ~3.8 MB of readings).
public struct WebViewLimits: Sendable, Equatable {
    /// Live sessions recorded at once; sessions opened beyond it are counted, not recorded.
    public var maxLiveSessions = 100
    /// Closed sessions kept for the page, newest first; the oldest is forgotten beyond it.
    public var maxClosedSessions = 20
    /// Messages kept per session: a ring, the oldest overwritten (the page says how many).
    public var maxMessagesPerSession = 10_000
    /// Bytes of each message body kept for the detail view (copied, never shared with the relay).
    public var bodyPreviewBytes = 1024
    /// Bytes of body previews and property copies one session keeps in its ring; past it new
    /// messages keep neither (they are counted) until older ones leave the ring. A peer sending
    /// messages with 8 KiB of properties each cannot make a session hold more than this.
    public var maxCopiedBytesPerSession = 2 << 20
    /// Estimated bytes of the analyzer's readings one session's ring keeps, per message it keeps
    /// (``AnalyzedMessage/retainedBytes``: typed properties, changes entries, checkpoint bodies,
    /// findings); the session's budget is ``maxAnalysisBytesPerSession``. Past it new messages
    /// are kept without their reading (counted) until older ones leave the ring. A ring of an
    /// ordinary pull (batches of 200 changes, each rev and reply) holds about 380 bytes of
    /// readings per message; a peer sending huge changes batches or checkpoint bodies cannot make
    /// a session hold more than the budget.
    public var maxAnalysisBytesPerMessage = 800
    /// ``maxMessagesPerSession`` × ``maxAnalysisBytesPerMessage``: 8 MB with the defaults.
    public var maxAnalysisBytesPerSession: Int { maxMessagesPerSession.multipliedReportingOverflow(by: maxAnalysisBytesPerMessage).partialValue }
    /// A message's properties are kept (copied) up to this size; larger ones are summarized.
    public var maxPropertyBytes = 8 * 1024
    /// Frames kept per message for its detail (and as many ACKs); more are counted ("+N more").
    public var maxFramesPerMessage = 64
    /// Messages partly received whose frames and ACKs are held until they complete; beyond it
    /// the table is cleared (those messages then show only their frame count).
    public var maxMessagesInProgress = 1024
    /// Bytes of rows one live feed sends at once (at least one row). A batch that was full is
    /// followed by the next as soon as the viewer's connection took it, within
    /// ``maxViewerBytesPerSecond``; rows are formatted once for all viewers.
    public var maxViewerBatchBytes = 256 * 1024
    /// Bytes one live feed sends per second on average (a token bucket holding one second's
    /// bytes pays for every write; a batch takes at most what is in it, and an empty bucket skips
    /// the poll). What keeps viewers cheap for the relay: a person reads a few rows a second, and
    /// the page loads everything kept through the JSON pages. About 200 rows a second of small
    /// messages; a viewer of a faster session lags and is told what it missed.
    public var maxViewerBytesPerSecond = 64 * 1024
    /// The kernel's send buffer for a live feed's connection (`SO_SNDBUF`): with the one batch
    /// NIO may hold, what a viewer that stops reading holds up at most.
    public var viewerSendBufferBytes = 256 * 1024
    /// Feed intervals a batch may wait untaken (the viewer's buffer full) before the viewer is
    /// behind: it then skips to the newest message and is told how many it missed. A viewer
    /// that is not sent to costs the relay nothing.
    public var viewerStallPolls = 2
    /// Live feeds (Server-Sent Events streams) open at once; more are answered 503.
    public var maxViewers = 32
    /// Messages one JSON page returns at most.
    public var maxPageSize = 5_000
    /// Bytes of Sync Gateway's log lines kept per session (`--sg-log`); later lines are counted,
    /// not kept. SG's info-level log of a 10,000-document pull is a few hundred lines.
    public var maxSyncGatewayLogBytesPerSession = 1 << 20
    /// How often a live feed looks for new records, in milliseconds.
    public var feedIntervalMilliseconds = 500

    public init() {}

    public static let `default` = WebViewLimits()
}
