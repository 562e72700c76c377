import NIOCore

/// The sending half of one direction's codec: one deflater and one running CRC for the whole
/// connection (wire-format reference §2.4, §3.3).
public final class OutboundCodec {
    private var deflater: RawDeflater?
    public private(set) var checksum = RunningChecksum()
    public let compressionLevel: Int32

    public init(compressionLevel: Int32 = BLIPLimits.default.compressionLevel) {
        self.compressionLevel = compressionLevel
    }

    /// A codec whose running CRC continues from `checksum` (§2.4) and whose deflater, created on
    /// first use, starts a new raw-deflate stream: legal after any sync-flush boundary (§3.2, §3.3).
    /// A relay takes over a direction with it.
    public init(compressionLevel: Int32 = BLIPLimits.default.compressionLevel, resumingChecksum checksum: UInt32) {
        self.compressionLevel = compressionLevel
        self.checksum = RunningChecksum(value: checksum)
    }

    /// A codec in the same state as `other` (deflate history and running CRC): both write on from
    /// the same point, independently.
    public init(copying other: OutboundCodec) throws(BLIPError) {
        compressionLevel = other.compressionLevel
        checksum = other.checksum
        deflater = try other.deflater.map { deflater throws(BLIPError) in try RawDeflater(copying: deflater) }
    }

    /// Writes a frame whose payload is already on the wire form: `wirePayload` (deflated by the
    /// original sender when the Compressed flag is set) is copied as is, while the running CRC
    /// advances over `chunk`, the uncompressed bytes it carries. The deflater is not touched, so
    /// this is only valid while the receiver's inflater has seen exactly the sender's compressed
    /// frames (§3.2).
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, wirePayload: ByteBuffer, chunk: ByteBuffer,
                            into output: inout ByteBuffer) {
        precondition(flags.type?.isAck != true, "ACK frames bypass the codec")
        BLIPFrame.writeHeader(number: number, flags: flags, to: &output)
        output.writeImmutableBuffer(wirePayload)
        checksum.update(chunk)
        output.writeInteger(checksum.value, endianness: .big)
    }

    /// Writes a complete non-ACK frame (header, payload, running checksum) to `output`. The
    /// frame's chunk of the message stream is `first` followed by `second` (either may be empty),
    /// so a sender can frame the properties and the body without joining them first.
    ///
    /// With the Compressed flag the payload is deflated with a sync flush and the trailer removed.
    /// An empty chunk is never sent compressed (§3.5): the flag is cleared on that frame, which is
    /// legal per frame. Returns the flags actually written.
    @discardableResult
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, first: UnsafeRawBufferPointer,
                            second: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                            into output: inout ByteBuffer) throws(BLIPError) -> FrameFlags {
        precondition(flags.type?.isAck != true, "ACK frames bypass the codec")
        var flags = flags
        if first.isEmpty && second.isEmpty { flags.isCompressed = false }
        BLIPFrame.writeHeader(number: number, flags: flags, to: &output)
        if flags.isCompressed {
            if deflater == nil { deflater = try RawDeflater(level: compressionLevel) }
            _ = try deflater!.deflateFrame(first, second, into: &output)
        } else {
            output.writeBytes(first)
            output.writeBytes(second)
        }
        checksum.update(first)
        checksum.update(second)
        output.writeInteger(checksum.value, endianness: .big)
        return flags
    }

    /// Convenience over ``encodeFrame(number:flags:first:second:into:)`` for one `ByteBuffer` chunk.
    @discardableResult
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, chunk: ByteBuffer,
                            into output: inout ByteBuffer) throws(BLIPError) -> FrameFlags {
        try encodeFrame(number: number, flags: flags, first: chunk, second: ByteBuffer(), into: &output)
    }

    /// ``encodeFrame(number:flags:first:second:into:)`` over two `ByteBuffer`s.
    @discardableResult
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, first: ByteBuffer, second: ByteBuffer,
                            into output: inout ByteBuffer) throws(BLIPError) -> FrameFlags {
        let result: Result<FrameFlags, BLIPError> = first.withUnsafeReadableBytes { one in
            second.withUnsafeReadableBytes { two in
                do { return .success(try encodeFrame(number: number, flags: flags, first: one, second: two, into: &output)) }
                catch let error as BLIPError { return .failure(error) }
                catch { preconditionFailure("only BLIPError is thrown") }
            }
        }
        return try result.get()
    }
}
