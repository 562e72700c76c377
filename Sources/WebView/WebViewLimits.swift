/// The bounds of what the web view keeps and sends, as named configuration. Everything a peer or
/// a viewer can grow is capped here; the worst case is
/// `(maxLiveSessions + maxClosedSessions) × maxMessagesPerSession` message records (each about
/// 200 bytes plus its copied properties, at most ``maxPropertyBytes``) and, per session, at most
/// ``maxPreviewBytesPerSession`` of body previews.
public struct WebViewLimits: Sendable, Equatable {
    /// Live sessions recorded at once; sessions opened beyond it are counted, not recorded.
    public var maxLiveSessions = 100
    /// Closed sessions kept for the page, newest first; the oldest is forgotten beyond it.
    public var maxClosedSessions = 20
    /// Messages kept per session: a ring, the oldest overwritten (the page says how many).
    public var maxMessagesPerSession = 10_000
    /// Bytes of each message body kept for the detail view (copied, never shared with the relay).
    public var bodyPreviewBytes = 1024
    /// Body preview bytes one session keeps in its ring; past it new messages keep no preview
    /// until older ones leave the ring.
    public var maxPreviewBytesPerSession = 2 << 20
    /// A message's properties are kept (copied) up to this size; larger ones are summarized.
    public var maxPropertyBytes = 8 * 1024
    /// Frames kept per message for its detail (and as many ACKs); more are counted ("+N more").
    public var maxFramesPerMessage = 64
    /// Messages partly received whose frames and ACKs are held until they complete; beyond it
    /// the table is cleared (those messages then show only their frame count).
    public var maxMessagesInProgress = 1024
    /// Rows one live feed sends per poll and the most a viewer may lag behind: a viewer further
    /// behind (its connection was slow, or the session runs faster than 2 × this many messages a
    /// second) skips ahead to the newest and is told how many messages it missed. This is what
    /// bounds the relay's cost of each viewer whatever the session's rate.
    public var maxViewerBacklog = 100
    /// Live feeds (Server-Sent Events streams) open at once; more are answered 503.
    public var maxViewers = 32
    /// Messages one JSON page returns at most.
    public var maxPageSize = 5_000
    /// How often a live feed looks for new records, in milliseconds.
    public var feedIntervalMilliseconds = 500

    public init() {}

    public static let `default` = WebViewLimits()
}
