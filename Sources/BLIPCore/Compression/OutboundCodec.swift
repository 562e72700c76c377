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

    /// Writes a complete non-ACK frame (header, payload, running checksum) to `output`.
    ///
    /// With the Compressed flag the payload is deflated with a sync flush and the trailer removed.
    /// An empty chunk is never sent compressed (§3.5): the flag is cleared on that frame, which is
    /// legal per frame. Returns the flags actually written.
    @discardableResult
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, chunk: UnsafeRawBufferPointer,
                            into output: inout ByteBuffer) throws(BLIPError) -> FrameFlags {
        precondition(flags.type?.isAck != true, "ACK frames bypass the codec")
        var flags = flags
        if chunk.isEmpty { flags.isCompressed = false }
        BLIPFrame.writeHeader(number: number, flags: flags, to: &output)
        if flags.isCompressed {
            if deflater == nil { deflater = try RawDeflater(level: compressionLevel) }
            _ = try deflater!.deflateFrame(chunk, into: &output)
        } else {
            output.writeBytes(chunk)
        }
        checksum.update(chunk)
        output.writeInteger(checksum.value, endianness: .big)
        return flags
    }

    /// Convenience over ``encodeFrame(number:flags:chunk:into:)`` for a `ByteBuffer` chunk.
    @discardableResult
    public func encodeFrame(number: MessageNumber, flags: FrameFlags, chunk: ByteBuffer,
                            into output: inout ByteBuffer) throws(BLIPError) -> FrameFlags {
        var result = flags
        var failure: BLIPError?
        chunk.withUnsafeReadableBytes { bytes in
            do { result = try encodeFrame(number: number, flags: flags, chunk: bytes, into: &output) }
            catch let error as BLIPError { failure = error }
            catch { preconditionFailure("only BLIPError is thrown") }
        }
        if let failure { throw failure }
        return result
    }
}
