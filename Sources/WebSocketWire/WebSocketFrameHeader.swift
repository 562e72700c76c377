import NIOCore

/// The fixed part of an RFC 6455 frame (§5.2): flags, opcode, payload length and masking key.
/// One type for every reader of WebSocket bytes: the relay's hops, the capture importer, the
/// live sniffer. Parsing checks nothing but completeness; each reader applies its own rules
/// (``WebSocketFrameScanner`` the relay's, the importer its own).
public struct WebSocketFrameHeader: Sendable, Hashable {
    public var fin: Bool
    /// RSV1…RSV3 as the low three bits (RSV1 = 0b100).
    public var reservedBits: UInt8
    /// The opcode, 0x0…0xF (constants below; 0x3–0x7 and 0xB–0xF are reserved).
    public var opcode: UInt8
    public var maskingKey: WebSocketMaskingKey?
    /// As sent; a 64-bit length may have its high bit set, which readers reject.
    public var payloadLength: UInt64
    /// Bytes before the payload: 2 to 14.
    public var headerLength: Int

    public static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    public init(fin: Bool, reservedBits: UInt8 = 0, opcode: UInt8, maskingKey: WebSocketMaskingKey?,
                payloadLength: UInt64, headerLength: Int) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
        self.headerLength = headerLength
    }

    public var isControl: Bool { opcode & 0x8 != 0 }
    /// Binary, text or continuation: a frame that carries (part of) a message.
    public var isData: Bool { opcode <= Self.binary }
    /// A defined opcode (not one of the reserved 0x3–0x7, 0xB–0xF).
    public var hasDefinedOpcode: Bool { opcode <= Self.binary || (Self.close...Self.pong).contains(opcode) }
    /// The whole frame's size on the wire (for lengths a reader accepted: they fit an `Int`).
    public var frameLength: Int { headerLength + Int(payloadLength) }

    /// Parses the header at the start of `bytes`; nil until all of it is there. Lengths in a
    /// longer form than needed are accepted (RFC 6455 asks senders for the shortest; a relay
    /// passes on what it got).
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> WebSocketFrameHeader? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[0], second = bytes[1]
        var length = UInt64(second & 0x7F)
        var cursor = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            cursor = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(bytes[index]) }
            cursor = 10
        }
        var key: WebSocketMaskingKey?
        if second & 0x80 != 0 {
            guard bytes.count >= cursor + 4 else { return nil }
            key = WebSocketMaskingKey(bytes[cursor], bytes[cursor + 1], bytes[cursor + 2], bytes[cursor + 3])
            cursor += 4
        }
        return WebSocketFrameHeader(fin: first & 0x80 != 0, reservedBits: (first >> 4) & 0x7, opcode: first & 0x0F,
                                    maskingKey: key, payloadLength: length, headerLength: cursor)
    }

    /// ``parse(_:)`` over a buffer's readable bytes.
    public init?(parsing bytes: ByteBufferView) {
        guard let header = bytes.withUnsafeBytes({ Self.parse($0) }) else { return nil }
        self = header
    }
}
