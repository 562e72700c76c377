import BLIPCore

/// The limits of a mediating session, as named configuration.
public struct MediationLimits: Sendable {
    /// Decoding limits (frame, message, inflate sizes; the receiver's ACK threshold, §5).
    public var decoder: BLIPLimits = .default
    /// Largest frame the relay builds for a message it frames itself (an ERR, an answer, a
    /// replacement), header and checksum included: LiteCore's 16 KiB, well under go-blip's
    /// 32 KiB read limit (wire-format reference §1.1, §4.2).
    public var maxFrameSize: Int = 16 * 1024
    /// Deflate level of the relay's own deflater (§3.1).
    public var compressionLevel: Int32 = 6
    /// Most bytes one direction may hold waiting for a timer (messages delayed by `delay`,
    /// `rateLimit`, `replyLatency`, frames a `bandwidth` link has not carried yet, ACK frames
    /// withheld, and requests that passed but queue behind a delayed or paced request) before the relay stops
    /// reading from that direction's sender: 16 MiB. Reading resumes once timers have released
    /// enough to be back at or under it. The relay ACKs a re-encoded direction's sender itself, so
    /// without this bound a sender whose messages are delayed could make the relay hold without
    /// limit. What one read batch brings in after the bound is reached is still accepted, so the
    /// held bytes can exceed it by at most one read's worth (plus the rest of a message split
    /// over frames). Messages awaiting their own later frames (body rules) are not counted: they
    /// need more reading to complete, and are bounded by the decoder's message-size limit.
    public var maxDelayedBytes: Int = 16 * 1024 * 1024

    public init() {}

    public static let `default` = MediationLimits()
}
