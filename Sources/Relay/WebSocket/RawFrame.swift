import NIOCore
import NIOWebSocket

/// WebSocket frames as bytes, for forwarding without NIO's frame encoder (RFC 6455 §5.2).
///
/// Every frame the relay passes on (data frames, a CLOSE, a mediating session's unchanged frame)
/// is written as the bytes it was received as (``DirectionPump/forward(raw:to:)``): a client's
/// frame keeps its mask key and masked bytes. The relay's own frames (PONG, CLOSE, a mediating
/// session's built frames) are made here, masked with a fresh key when they go to the upstream.
enum RawFrame {
    /// Header bytes of `frame`: 2 to 14.
    private static func headerLength(payload: Int, masked: Bool) -> Int {
        (payload < 126 ? 2 : payload <= 0xFFFF ? 4 : 10) + (masked ? 4 : 0)
    }

    /// Writes the header of a frame carrying `length` payload bytes, masked with `mask` if set.
    private static func writeHeader(firstByte: UInt8, length: Int, mask: UInt32?, into buffer: inout ByteBuffer) {
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        buffer.writeInteger(firstByte)
        if length < 126 {
            buffer.writeInteger(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(length), endianness: .big)
        } else {
            buffer.writeInteger(maskBit | 127)
            buffer.writeInteger(UInt64(length), endianness: .big)
        }
        if let mask { buffer.writeInteger(mask, endianness: .big) }
    }

    /// A frame of the relay's own: masked with a fresh key when `masked` (towards the upstream).
    static func make(opcode: WebSocketOpcode, payload: ByteBuffer, masked: Bool,
                     allocator: ByteBufferAllocator) -> ByteBuffer {
        let mask: UInt32? = masked ? .random(in: .min ... .max) : nil
        var buffer = allocator.buffer(capacity: headerLength(payload: payload.readableBytes, masked: masked)
                                      + payload.readableBytes)
        writeHeader(firstByte: 0x80 | UInt8(webSocketOpcode: opcode), length: payload.readableBytes,
                    mask: mask, into: &buffer)
        var body = payload
        if let mask { body = xorCopy(payload, mask: mask, allocator: allocator) }
        buffer.writeBuffer(&body)
        return buffer
    }

    /// `key`'s 4 bytes in one word, the first in the high bits (``WebSocketFrameHeader/mask``).
    static func mask(of key: WebSocketMaskingKey) -> UInt32 {
        UInt32(key[0]) << 24 | UInt32(key[1]) << 16 | UInt32(key[2]) << 8 | UInt32(key[3])
    }

    /// A copy of `payload` XORed with the masking key `mask` (``WebSocketFrameHeader/mask``),
    /// 8 bytes at a time (NIO's own unmask goes byte by byte; reference notes §1, gotcha 1).
    /// Unmasks a received client frame for inspection, and masks the relay's own frames.
    static func xorCopy(_ payload: ByteBuffer, mask: UInt32, allocator: ByteBufferAllocator) -> ByteBuffer {
        var copy = allocator.buffer(capacity: payload.readableBytes)
        copy.writeImmutableBuffer(payload)
        // The key's bytes in wire order, twice.
        let key = mask.bigEndian
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { bytes in
            bytes.storeBytes(of: key, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: key, toByteOffset: 4, as: UInt32.self)
        }
        copy.withUnsafeMutableReadableBytes { bytes in
            let count = bytes.count
            var index = 0
            while index + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                bytes.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < count {
                bytes[index] ^= UInt8(truncatingIfNeeded: mask >> (24 - 8 * UInt32(index & 3)))
                index += 1
            }
        }
        return copy
    }
}
