import NIOCore

/// The fixed part of an RFC 6455 frame (§5.2): flags, opcode, payload length and masking key.
public struct WebSocketFrameHeader: Sendable, Hashable {
    public var fin: Bool
    /// RSV1…RSV3 as the low three bits (RSV1 = 0b100).
    public var reservedBits: UInt8
    public var opcode: UInt8
    public var maskingKey: WebSocketMaskingKey?
    /// As sent; a 64-bit length may have its high bit set, which ``problem(sentBy:allowedReservedBits:)`` rejects.
    public var payloadLength: UInt64
    /// Bytes before the payload: 2 to 14.
    public var headerLength: Int

    public static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    public var isControl: Bool { opcode & 0x8 != 0 }

    /// Parses the header at the start of `bytes`; `nil` until all of it is there.
    /// Lengths in a longer form than needed are accepted.
    public init?(parsing bytes: ByteBufferView) {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.startIndex + 1]
        var length = UInt64(second & 0x7F)
        var cursor = bytes.startIndex + 2
        let extendedBytes = length == 126 ? 2 : length == 127 ? 8 : 0
        let maskBytes = second & 0x80 != 0 ? 4 : 0
        guard bytes.count >= 2 + extendedBytes + maskBytes else { return nil }
        if extendedBytes > 0 {
            length = bytes[cursor..<(cursor + extendedBytes)].reduce(0) { $0 << 8 | UInt64($1) }
            cursor += extendedBytes
        }
        fin = first & 0x80 != 0
        reservedBits = (first >> 4) & 0x7
        opcode = first & 0x0F
        maskingKey = maskBytes == 0 ? nil
            : WebSocketMaskingKey(bytes[cursor], bytes[cursor + 1], bytes[cursor + 2], bytes[cursor + 3])
        payloadLength = length
        headerLength = 2 + extendedBytes + maskBytes
    }

    /// What makes this header invalid for a frame from `sender`, if anything (RFC 6455 §5.1–5.5).
    /// Fragmentation state is the parser's concern, not checked here.
    func problem(sentBy sender: WebSocketMessageParser.Sender, allowedReservedBits: UInt8) -> CaptureError.FrameProblem? {
        if reservedBits & ~allowedReservedBits != 0 { return .reservedBitsSet(reservedBits) }
        if (0x3...0x7).contains(opcode) || opcode > 0xA { return .reservedOpcode(opcode) }
        if payloadLength >> 63 != 0 { return .lengthHighBitSet }
        switch sender {
        case .client where maskingKey == nil: return .unmaskedClientFrame
        case .server where maskingKey != nil: return .maskedServerFrame
        default: break
        }
        if isControl, !fin { return .fragmentedControlFrame }
        if isControl, payloadLength > 125 { return .controlPayloadTooLong(Int(payloadLength)) }
        return nil
    }
}
