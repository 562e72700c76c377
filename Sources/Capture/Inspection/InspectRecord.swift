import BLIPCore
import Crypto
import NIOCore

/// One line of `blipscope inspect`: a BLIP message, an ACK, a frame of a message that takes
/// more than one, a WebSocket close, or a decoding problem, with the connection and direction it belongs to.
public struct InspectRecord: Sendable {
    public enum Kind: Sendable {
        case message(BLIPMessage)
        case ack(AckInfo)
        /// A frame with MoreComing set (one of a message that takes more than one), when asked
        /// (``CaptureInspector/includeFrames``); `wireBytes` is the whole frame, header and checksum
        /// included. The message's own record describes its last frame.
        case frame(number: MessageNumber, flags: FrameFlags, wireBytes: Int)
        case close(code: UInt16?, reason: String)
        /// A decoding problem: `frame` is the 1-based index of the WebSocket message in its
        /// direction; `fatal` when that direction could not be decoded any further.
        case error(String, frame: Int, fatal: Bool)
    }

    /// 0-based index of the TCP connection in the file.
    public var connection: Int
    public var direction: BLIPDirection
    /// Seconds since 1970 of the segment that completed the record.
    public var timestamp: Double
    public var kind: Kind
    /// For a reply: the profile of the request it answers and the round-trip time in seconds.
    public var requestProfile: String?
    public var roundTrip: Double?
    /// The message in replication-protocol terms (e.g. `changes 12 revs seq 100…112 → wants 10`),
    /// when a session analyzer has read it.
    public var summary: String?

    /// Hex SHA-1 of the uncompressed body (messages only).
    public var bodySHA1: String? {
        guard case .message(let message) = kind else { return nil }
        return message.body.withUnsafeReadableBytes { bytes in
            Insecure.SHA1.hash(data: bytes).map { byte in
                let digits = String(byte, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
        }
    }
}
