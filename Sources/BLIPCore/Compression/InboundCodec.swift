import NIOCore

/// The receiving half of one direction's codec: one inflater and one running CRC for the whole
/// connection (wire-format reference §2.4, §3.2, §3.4).
///
/// Every non-ACK frame of the direction must pass through ``decode(_:appendingTo:)`` in order,
/// compressed or not, or later checksums and compressed frames fail. ACK frames must not.
public final class InboundCodec {
    private var inflater: (any RawInflater)?
    public private(set) var checksum = RunningChecksum()
    public let maxInflatedFrameSize: Int
    /// The library that inflates and checksums (ISA-L unless ``DecodeLibrary/selected`` says zlib).
    public let library: DecodeLibrary

    public init(maxInflatedFrameSize: Int = BLIPLimits.default.maxInflatedFrameSize,
                library: DecodeLibrary = .selected) {
        self.maxInflatedFrameSize = maxInflatedFrameSize
        self.library = library
    }

    /// A codec in the same state as `other` (history and running CRC): both read on from the same
    /// point, independently (a stream that forks, such as a relayed direction once the relay
    /// re-encodes one of its legs).
    public init(copying other: InboundCodec) throws(BLIPError) {
        maxInflatedFrameSize = other.maxInflatedFrameSize
        library = other.library
        checksum = other.checksum
        inflater = try other.inflater.map { inflater throws(BLIPError) in try inflater.copy(using: other.library) }
    }

    /// Returns the frame's uncompressed payload, checking the running CRC: a slice of the frame
    /// itself when it is not compressed (no copy), else a new buffer holding the inflated bytes.
    public func decode(_ frame: BLIPFrame) throws(BLIPError) -> ByteBuffer {
        if frame.flags.isCompressed && frame.payload.readableBytes > 0 {
            var output = ByteBuffer()
            try decode(frame, appendingTo: &output)
            return output
        }
        checksum.update(frame.payload, using: library)
        try verify(frame)
        return frame.payload
    }

    private func verify(_ frame: BLIPFrame) throws(BLIPError) {
        guard checksum.value == frame.checksum else {
            throw BLIPError(.badChecksum,
                "frame \(frame.flags.type?.description ?? "?")#\(frame.number): checksum "
                + "\(hex32(frame.checksum)), expected \(hex32(checksum.value))")
        }
    }

    /// Appends the frame's uncompressed payload to `output`, updates the running CRC and checks
    /// it against the frame's checksum. Returns the number of uncompressed bytes.
    ///
    /// A compressed frame with an empty payload yields nothing and does not touch the inflater
    /// (§3.5). Inflating stops (``BLIPError/Code/inflatedFrameTooLarge``) past `limit` bytes, when
    /// given and below ``maxInflatedFrameSize``: a message's remaining budget, so a decompression
    /// bomb is never inflated past its message's limit. Errors are fatal: after one, the
    /// direction cannot be decoded any further.
    @discardableResult
    public func decode(_ frame: BLIPFrame, appendingTo output: inout ByteBuffer, limit: Int? = nil) throws(BLIPError) -> Int {
        let start = output.writerIndex
        let count: Int
        if frame.flags.isCompressed && frame.payload.readableBytes > 0 {
            if inflater == nil { inflater = try library.makeRawInflater() }
            count = try inflater!.inflateFrame(frame.payload, into: &output,
                                               limit: min(limit ?? maxInflatedFrameSize, maxInflatedFrameSize))
        } else {
            var payload = frame.payload
            count = output.writeBuffer(&payload)
        }
        output.withUnsafeReadableBytes { bytes in
            let newBytes = UnsafeRawBufferPointer(rebasing: bytes[(start - output.readerIndex)...])
            checksum.update(newBytes, using: library)
        }
        try verify(frame)
        return count
    }
}

/// Eight lowercase hex digits.
func hex32(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
