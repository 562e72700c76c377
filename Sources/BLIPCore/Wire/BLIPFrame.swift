import NIOCore

/// A message number. Requests are numbered 1, 2, 3 … per direction; replies and ACKs reuse the
/// number of the message they refer to (wire-format reference §4.4).
public typealias MessageNumber = UInt64

/// One BLIP frame, which is exactly one WebSocket binary message (wire-format reference §0, §2).
///
/// Parsing splits the header from the payload and the checksum without touching the codec: the
/// payload is still compressed when the Compressed flag is set. It copies nothing: `payload` is a
/// slice of the input buffer.
public struct BLIPFrame: Sendable {
    public var number: MessageNumber
    public var flags: FrameFlags
    /// Non-ACK: the payload as sent (deflated if compressed), without the checksum.
    /// ACK: empty (see ``ackedBytes``).
    public var payload: ByteBuffer
    /// Non-ACK: the running CRC32 carried by the frame (big-endian on the wire). ACK: 0.
    public var checksum: UInt32
    /// ACK: the byte count acknowledged. Non-ACK: 0.
    public var ackedBytes: UInt64
    /// The size of the header (number and flags varints) in bytes.
    public var headerLength: Int

    /// The bytes that follow the header: payload plus checksum for a non-ACK frame. ACK flow
    /// control counts these (§5).
    @inlinable public var bytesAfterHeader: Int { payload.readableBytes + (flags.type?.isAck == true ? 0 : 4) }

    public init(number: MessageNumber, flags: FrameFlags, payload: ByteBuffer,
                checksum: UInt32 = 0, ackedBytes: UInt64 = 0, headerLength: Int? = nil) {
        self.number = number
        self.flags = flags
        self.payload = payload
        self.checksum = checksum
        self.ackedBytes = ackedBytes
        self.headerLength = headerLength
            ?? Varint.encodedLength(number) + Varint.encodedLength(UInt64(flags.rawValue))
    }

    /// Parses one frame. Throws a fatal ``BLIPError`` for a short frame, a bad varint, a non-ACK
    /// frame with fewer than 4 bytes after its header, or a malformed ACK body. A frame of an
    /// undefined type parses (its type is nil): deciding to ignore it is the receiver's job.
    public static func parse(_ frame: ByteBuffer) throws(BLIPError) -> BLIPFrame {
        guard frame.readableBytes >= 2 else {
            throw BLIPError(.shortFrame, "frame of \(frame.readableBytes) bytes is shorter than a header")
        }
        var offset = 0
        let number: UInt64
        let rawFlags: UInt64
        var ackedBytes: UInt64 = 0
        do {
            (number, rawFlags) = try frame.withUnsafeReadableBytes { bytes in
                (try Varint.read(bytes, at: &offset), try Varint.read(bytes, at: &offset))
            }
        } catch let error as BLIPError {
            throw BLIPError(.shortFrame, "illegal frame header: \(error.detail)")
        } catch {
            preconditionFailure("only BLIPError is thrown")
        }
        let flags = FrameFlags(rawValue: UInt8(truncatingIfNeeded: rawFlags))
        let headerLength = offset
        let rest = frame.readableBytes - headerLength
        if flags.type?.isAck == true {
            var body = frame.getSlice(at: frame.readerIndex + headerLength, length: rest)!
            do {
                ackedBytes = try Varint.read(from: &body)
            } catch {
                throw BLIPError(.malformedAck, "ACK #\(number) has no valid byte count (\(error.detail))")
            }
            let empty = frame.getSlice(at: frame.readerIndex, length: 0)!
            return BLIPFrame(number: number, flags: flags, payload: empty, ackedBytes: ackedBytes,
                             headerLength: headerLength)
        }
        guard rest >= 4 else {
            throw BLIPError(.missingChecksum, "frame #\(number) ends before its checksum")
        }
        let payload = frame.getSlice(at: frame.readerIndex + headerLength, length: rest - 4)!
        let checksum = frame.getInteger(at: frame.writerIndex - 4, endianness: .big, as: UInt32.self)!
        return BLIPFrame(number: number, flags: flags, payload: payload, checksum: checksum,
                         headerLength: headerLength)
    }

    /// Writes the header varints to `buffer`.
    @inlinable
    public static func writeHeader(number: MessageNumber, flags: FrameFlags, to buffer: inout ByteBuffer) {
        Varint.write(number, to: &buffer)
        Varint.write(UInt64(flags.rawValue), to: &buffer)
    }

    /// Serializes an ACK frame: header with type|Urgent|NoReply, then the byte count (§2.5).
    public static func ack(_ type: MessageType, number: MessageNumber, bytes: UInt64,
                           allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        precondition(type.isAck, "ack(_:) takes ACKMSG or ACKRPY")
        var buffer = allocator.buffer(capacity: 24)
        writeHeader(number: number, flags: FrameFlags(type: type, urgent: true, noReply: true), to: &buffer)
        Varint.write(bytes, to: &buffer)
        return buffer
    }
}
