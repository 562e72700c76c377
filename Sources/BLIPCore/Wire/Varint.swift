import NIOCore

/// Unsigned LEB128 varints as BLIP uses them for message numbers, flags, the properties length and
/// ACK byte counts (wire-format reference §4.1).
///
/// Reading rejects a varint cut off by the end of the input, more than ``maxLength`` bytes, and a
/// tenth byte above 1 (a value over 64 bits). Non-minimal encodings such as `80 00` are accepted,
/// as LiteCore and Go do. Writing always produces the minimal encoding.
public enum Varint {
    /// The longest varint accepted: 10 bytes hold 64 bits.
    public static let maxLength = 10

    /// Decodes a varint at `offset` in `bytes`, advancing `offset` past it. A one-byte varint (a
    /// frame's flags, most message numbers and property-block sizes) is read inline; longer ones,
    /// and the errors, take ``readLong(_:at:)``.
    @inlinable @inline(__always)
    public static func read(_ bytes: UnsafeRawBufferPointer, at offset: inout Int) throws(BLIPError) -> UInt64 {
        if offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return try readLong(bytes, at: &offset)
    }

    /// ``read(_:at:)`` past its one-byte case.
    @inlinable @inline(never)
    static func readLong(_ bytes: UnsafeRawBufferPointer, at offset: inout Int) throws(BLIPError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var index = offset
        while true {
            guard index < bytes.count else {
                throw BLIPError(.truncatedVarint, "varint cut off after \(index - offset) bytes")
            }
            let byte = bytes[index]
            index += 1
            if index - offset == maxLength && byte > 1 {
                throw BLIPError(.overlongVarint, "varint overflows 64 bits")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                offset = index
                return result
            }
            if index - offset >= maxLength {
                throw BLIPError(.overlongVarint, "varint longer than \(maxLength) bytes")
            }
            shift += 7
        }
    }

    /// Decodes a varint from the front of `buffer`, moving its reader index past it.
    @inlinable
    public static func read(from buffer: inout ByteBuffer) throws(BLIPError) -> UInt64 {
        var offset = 0
        let value: UInt64
        do {
            value = try buffer.withUnsafeReadableBytes { bytes in try Varint.read(bytes, at: &offset) }
        } catch let error as BLIPError {
            throw error
        } catch {
            preconditionFailure("Varint.read throws only BLIPError")
        }
        buffer.moveReaderIndex(forwardBy: offset)
        return value
    }

    /// The number of bytes of the minimal encoding of `value`.
    @inlinable
    public static func encodedLength(_ value: UInt64) -> Int {
        var length = 1
        var rest = value >> 7
        while rest != 0 {
            length += 1
            rest >>= 7
        }
        return length
    }

    /// Appends the minimal encoding of `value` to `buffer`; returns the bytes written.
    @inlinable
    @discardableResult
    public static func write(_ value: UInt64, to buffer: inout ByteBuffer) -> Int {
        var rest = value
        var written = 0
        while rest >= 0x80 {
            written += buffer.writeInteger(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        written += buffer.writeInteger(UInt8(rest))
        return written
    }

    /// Appends `value` to `bytes`, as the ByteBuffer form writes it.
    public static func write(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
