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

    public init() {}

    public static let `default` = MediationLimits()
}
