/// Writes RFC 6455 frames (§5.2) for synthesized captures: one unfragmented frame per message,
/// with the shortest length form, masked when a key is given (every client frame must be, §5.3).
public enum WebSocketFrameEncoder {
    /// The frame bytes for `payload`; `mask` XORs the payload as RFC 6455 §5.3 describes.
    public static func frame(opcode: UInt8, payload: some Collection<UInt8>, mask: WebSocketMaskingKey?) -> [UInt8] {
        let count = payload.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 14)
        bytes.append(0x80 | (opcode & 0x0F))
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if count < 126 {
            bytes.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(maskBit | 126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(count & 0xFF))
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        guard let mask else {
            bytes.append(contentsOf: payload)
            return bytes
        }
        bytes.append(contentsOf: [mask[0], mask[1], mask[2], mask[3]])
        for (position, byte) in payload.enumerated() { bytes.append(byte ^ mask[position]) }
        return bytes
    }

    /// A close frame's payload: the code (big-endian) and the UTF-8 reason; empty without a code.
    public static func closePayload(code: UInt16?, reason: String) -> [UInt8] {
        guard let code else { return [] }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123))
    }

    /// A deterministic masking key for the `index`-th client frame of a synthesized capture, so
    /// exports of the same session are byte-identical (SplitMix64 of the index).
    public static func maskingKey(index: UInt64) -> WebSocketMaskingKey {
        var z = index &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return WebSocketMaskingKey(UInt8(truncatingIfNeeded: z), UInt8(truncatingIfNeeded: z >> 8),
                                   UInt8(truncatingIfNeeded: z >> 16), UInt8(truncatingIfNeeded: z >> 24))
    }
}
