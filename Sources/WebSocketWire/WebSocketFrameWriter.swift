import NIOCore

/// Writes RFC 6455 frames (§5.2): one unfragmented frame per message, the shortest length form,
/// masked when a key is given (every client frame must be, §5.3). For the frames a relay builds
/// itself (PONG, CLOSE, re-encoded BLIP frames) and for synthesized captures.
public enum WebSocketFrameWriter {
    /// Header bytes of a frame with `length` payload bytes: 2 to 14.
    public static func headerLength(payload length: Int, masked: Bool) -> Int {
        (length < 126 ? 2 : length <= 0xFFFF ? 4 : 10) + (masked ? 4 : 0)
    }

    /// Writes the header of a final frame of `opcode` carrying `length` payload bytes.
    public static func writeHeader(opcode: UInt8, length: Int, mask: WebSocketMaskingKey?, into buffer: inout ByteBuffer) {
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        buffer.writeInteger(0x80 | (opcode & 0x0F))
        if length < 126 {
            buffer.writeInteger(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(length), endianness: .big)
        } else {
            buffer.writeInteger(maskBit | 127)
            buffer.writeInteger(UInt64(length), endianness: .big)
        }
        if let mask { buffer.writeBytes([mask[0], mask[1], mask[2], mask[3]]) }
    }

    /// A whole frame carrying `payload`, masked with `mask` when given.
    public static func frame(opcode: UInt8, payload: ByteBuffer, mask: WebSocketMaskingKey?,
                             allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: headerLength(payload: payload.readableBytes, masked: mask != nil)
                                      + payload.readableBytes)
        writeHeader(opcode: opcode, length: payload.readableBytes, mask: mask, into: &buffer)
        let offset = buffer.readableBytes
        buffer.writeImmutableBuffer(payload)
        if let mask {
            buffer.withUnsafeMutableReadableBytes { raw in
                mask.apply(to: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]))
            }
        }
        return buffer
    }

    /// ``frame(opcode:payload:mask:allocator:)`` as bytes, for writers that build arrays.
    public static func frame(opcode: UInt8, payload: some Collection<UInt8>, mask: WebSocketMaskingKey?) -> [UInt8] {
        Array(frame(opcode: opcode, payload: ByteBuffer(bytes: payload), mask: mask).readableBytesView)
    }

    /// A CLOSE frame's payload: the code (big-endian) and the UTF-8 reason cut to fit the 125-byte
    /// control-frame limit (§5.5) at a character boundary; empty without a code.
    public static func closePayload(code: UInt16?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        var reasonBytes = Array(reason.utf8.prefix(123))
        while !reasonBytes.isEmpty, String(validating: reasonBytes, as: UTF8.self) == nil { reasonBytes.removeLast() }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + reasonBytes
    }
}
