import Capture

/// Encodes RFC 6455 frames and HTTP handshakes for tests, independently of the parser.
enum WebSocketBytes {
    enum LengthForm { case shortest, sixteenBit, sixtyFourBit }

    static func frame(
        opcode: UInt8, payload: [UInt8], fin: Bool = true, reservedBits: UInt8 = 0,
        mask: [UInt8]? = nil, lengthForm: LengthForm = .shortest
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (reservedBits & 0x7) << 4 | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let count = payload.count
        switch lengthForm {
        case .shortest where count < 126:
            bytes.append(maskBit | UInt8(count))
        case .shortest where count <= 0xFFFF, .sixteenBit:
            bytes.append(maskBit | 126)
            bytes += bigEndian(UInt16(count))
        default:
            bytes.append(maskBit | 127)
            bytes += bigEndian(UInt64(count))
        }
        guard let mask else { return bytes + payload }
        bytes += mask
        // Byte by byte on purpose: the reference the word-wide unmasking is checked against.
        return bytes + payload.enumerated().map { $1 ^ mask[$0 % 4] }
    }

    static func binary(_ payload: [UInt8], masked: Bool) -> [UInt8] {
        frame(opcode: 2, payload: payload, mask: masked ? [0x37, 0xFA, 0x21, 0x3D] : nil)
    }

    static func close(code: UInt16, reason: String = "", masked: Bool) -> [UInt8] {
        frame(opcode: 8, payload: bigEndian(code) + Array(reason.utf8), mask: masked ? [1, 2, 3, 4] : nil)
    }

    static let upgradeRequest = """
        GET /db/_blipsync?client=test HTTP/1.1\r
        Host: 10.0.0.2:4984\r
        Connection: Upgrade\r
        Upgrade: websocket\r
        Sec-WebSocket-Version: 13\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r
        \r

        """

    static let switchingProtocols = """
        HTTP/1.1 101 Switching Protocols\r
        Upgrade: websocket\r
        Connection: Upgrade\r
        Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
        Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r
        \r

        """

    /// Payload `index` of a test conversation: distinct, of varied length.
    static func payload(_ index: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 7) }
    }
}
