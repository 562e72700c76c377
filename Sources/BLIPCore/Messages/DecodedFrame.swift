import NIOCore

/// Everything one received frame produced.
public struct DecodedFrame: Sendable {
    public enum Outcome: Sendable {
        /// An ACK frame arrived (it does not touch the codec, §2.5).
        case ack(AckInfo)
        /// A data frame was decoded and added to its message.
        case data
        /// The frame was decoded (or, for an undefined type, skipped) and then ignored, as the
        /// peers do (§4.4). The connection goes on.
        case ignored(BLIPError)
    }

    public var number: MessageNumber
    public var flags: FrameFlags
    /// Bytes after the header (payload as sent, plus the checksum for non-ACK frames).
    public var wireBytes: Int
    /// Uncompressed payload bytes this frame carried.
    public var payloadBytes: Int
    public var outcome: Outcome
    /// True when this frame was the first of its message.
    public var startsMessage = false
    /// Set on the frame that completed the message's properties, when more frames follow (a
    /// message whole in one frame comes only as ``message``).
    public var head: MessageHead?
    /// Set on the frame that completed the message.
    public var message: BLIPMessage?
    /// The ACK the receiver should now send for this message (§5), if any.
    public var ackToSend: AckInfo?
    /// Only when the decoder ``DirectionDecoder/exposesPayloads``: the frame's uncompressed
    /// payload (its slice of the message stream, §2.4) and its payload as sent. Both share storage
    /// with the decoder's buffers: copy them to keep them beyond the next frame.
    public var payload: ByteBuffer?
    public var wirePayload: ByteBuffer?
    /// Only with ``payload``: the direction's running CRC before this frame (§2.4), from which a
    /// re-encoder of the stream that starts at this frame resumes.
    public var checksumBefore: UInt32 = 0
}
