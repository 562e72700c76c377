/// The limits a BLIP endpoint or decoder enforces, as named configuration.
/// Defaults follow what the real peers do (wire-format reference §2.3, §4.2, §5).
public struct BLIPLimits: Sendable, Equatable {
    /// Largest properties block accepted or sent (LiteCore's `kMaxPropertiesSize`, §2.3).
    public var maxPropertiesSize: Int = 100 * 1024
    /// Largest assembled message (properties and body, uncompressed) accepted.
    public var maxMessageSize: Int = 64 * 1024 * 1024
    /// Largest output one frame may inflate to: a guard against decompression bombs (§3.4).
    public var maxInflatedFrameSize: Int = 8 * 1024 * 1024
    /// Largest incoming frame (one WebSocket message). LiteCore accepts 1 MiB (§1.1).
    public var maxIncomingFrameSize: Int = 1024 * 1024
    /// Largest outgoing frame, header and checksum included (LiteCore's `kBigFrameSize`, §4.2).
    public var maxFrameSize: Int = 16 * 1024
    /// Outgoing frame size while an urgent message waits behind a normal one (§4.2).
    public var urgentWaitingFrameSize: Int = 4 * 1024
    /// A sender pauses a message with this many unacknowledged bytes (§5).
    public var maxUnackedBytes: Int = 128_000
    /// A receiver acknowledges a message after this many bytes since its last ACK (§5).
    public var ackThreshold: Int = 50_000
    /// Most bytes (uncompressed) of partly received messages one direction may hold, all
    /// messages together: past it the direction fails (``BLIPError/Code/tooMuchInProgress``). A
    /// hostile sender cannot start many large messages and finish none. Room for the largest
    /// message and some more.
    public var maxBytesInProgress: Int = 96 * 1024 * 1024
    /// Most buffer capacity one direction reserves ahead of received bytes for messages being
    /// assembled. From its second frame, a message's buffer is sized for the last multi-frame
    /// message of the direction (peers send runs of like sizes), so a large message is allocated
    /// once instead of doubling as it grows (each doubling copies what it holds). A sender that
    /// starts many messages after a large one gets no more reserved than this; past it, buffers
    /// grow as the bytes come.
    public var maxReservedAssemblyBytes: Int = 16 * 1024 * 1024
    /// Most messages one direction may have partly received at once (LiteCore interleaves a few:
    /// urgent ones overtake, §4.3).
    public var maxMessagesInProgress: Int = 1024
    /// Requests of the other direction whose replies a decoder waits for. Past it the oldest is
    /// forgotten (counted in ``DirectionDecoder/forgottenReplies``): its reply, if it ever comes,
    /// is decoded and ignored rather than paired, so a peer that never answers cannot grow the
    /// table (a real replication has a few thousand in flight at most).
    public var maxAwaitedReplies: Int = 65_536
    /// Deflate level for outgoing compressed frames, 1…9 (LiteCore's default is 6, §3.1).
    public var compressionLevel: Int32 = 6

    public init() {}

    public static let `default` = BLIPLimits()
}
