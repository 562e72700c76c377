import NIOCore

/// A frame as its direction's decoder read it, handed to a ``CaptureRedactor`` by a relay that
/// decodes every frame anyway, so the redactor does not inflate and checksum the stream again.
public struct DecodedChunk: Sendable {
    /// The frame's uncompressed payload: its slice of the message stream (wire-format reference §2.4).
    public var payload: ByteBuffer
    /// The direction's running CRC before this frame.
    public var checksumBefore: UInt32

    public init(payload: ByteBuffer, checksumBefore: UInt32) {
        self.payload = payload
        self.checksumBefore = checksumBefore
    }
}
