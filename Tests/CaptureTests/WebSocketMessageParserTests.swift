@testable import Capture
import NIOCore
import Testing
import WebSocketWire

@Suite struct WebSocketMessageParserTests {
    /// Parses `bytes` fed in pieces of `pieceSize`, then finishes.
    static func parse(
        _ bytes: [UInt8], sender: WebSocketMessageParser.Sender, pieceSize: Int = .max,
        maxMessageBytes: Int = 1 << 20, reservedBits: UInt8 = 0
    ) -> [WebSocketMessageParser.Output] {
        var parser = WebSocketMessageParser(sender: sender, maxMessageBytes: maxMessageBytes, allowedReservedBits: reservedBits)
        var outputs: [WebSocketMessageParser.Output] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + min(pieceSize, bytes.count))
            outputs += parser.parse(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
        }
        return outputs + parser.finish()
    }

    static func describe(_ outputs: [WebSocketMessageParser.Output]) -> [String] {
        outputs.map {
            switch $0 {
            case let .message(opcode, payload): "message \(opcode) \(String(decoding: payload.readableBytesView, as: UTF8.self))"
            case let .ping(payload): "ping \(String(decoding: payload.readableBytesView, as: UTF8.self))"
            case let .pong(payload): "pong \(String(decoding: payload.readableBytesView, as: UTF8.self))"
            case let .close(code, reason): "close \(code.map(String.init) ?? "-") \(reason)"
            case let .error(error): "error \(error.code)"
            }
        }
    }

    static func error(in outputs: [WebSocketMessageParser.Output]) -> CaptureError? {
        guard case let .error(error)? = outputs.last else { return nil }
        return error
    }

    @Test func maskedClientFramesAreUnmasked() {
        let payload = WebSocketBytes.payload(3, length: 1000)
        let outputs = Self.parse(WebSocketBytes.binary(payload, masked: true), sender: .client)
        guard case let .message(opcode, unmasked)? = outputs.first else {
            Issue.record("no message: \(outputs)")
            return
        }
        #expect(opcode == 2)
        #expect(Array(unmasked.readableBytesView) == payload)
        #expect(outputs.count == 1)
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func fragmentedMessageWithInterleavedPing(pieceSize: Int) {
        let mask: [UInt8] = [9, 8, 7, 6]
        let bytes = WebSocketBytes.frame(opcode: 1, payload: Array("Hello, ".utf8), fin: false, mask: mask)
            + WebSocketBytes.frame(opcode: 9, payload: Array("are you there".utf8), mask: mask)
            + WebSocketBytes.frame(opcode: 0, payload: Array("fragmented ".utf8), fin: false, mask: mask)
            + WebSocketBytes.frame(opcode: 0, payload: Array("world".utf8), mask: mask)
            + WebSocketBytes.frame(opcode: 10, payload: [], mask: mask)
            + WebSocketBytes.close(code: 1000, reason: "bye", masked: true)
        #expect(Self.describe(Self.parse(bytes, sender: .client, pieceSize: pieceSize)) == [
            "ping are you there", "message 1 Hello, fragmented world", "pong ", "close 1000 bye",
        ])
    }

    @Test func sixteenAndSixtyFourBitLengths() {
        let medium = WebSocketBytes.payload(1, length: 300)
        let large = WebSocketBytes.payload(2, length: 70_000)
        let small = WebSocketBytes.payload(3, length: 5)
        let bytes = WebSocketBytes.frame(opcode: 2, payload: medium)
            + WebSocketBytes.frame(opcode: 2, payload: large)
            + WebSocketBytes.frame(opcode: 2, payload: small, lengthForm: .sixtyFourBit)  // non-minimal: accepted
            + WebSocketBytes.frame(opcode: 2, payload: small, lengthForm: .sixteenBit)
        let payloads = Self.parse(bytes, sender: .server, pieceSize: 4096).compactMap { output -> [UInt8]? in
            guard case let .message(_, payload) = output else { return nil }
            return Array(payload.readableBytesView)
        }
        #expect(payloads == [medium, large, small, small])
        #expect(Array(WebSocketBytes.frame(opcode: 2, payload: large).prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    @Test func oversizedMessageIsRejectedFromItsHeader() throws {
        let bytes = WebSocketBytes.frame(opcode: 2, payload: WebSocketBytes.payload(0, length: 100))
            + WebSocketBytes.frame(opcode: 2, payload: WebSocketBytes.payload(0, length: 10), fin: false)
            + WebSocketBytes.frame(opcode: 9, payload: Array("ping".utf8))
            + WebSocketBytes.frame(opcode: 0, payload: WebSocketBytes.payload(0, length: 100))
        // Only the header of the fourth frame is fed: the error must not wait for its payload.
        var parser = WebSocketMessageParser(sender: .server, maxMessageBytes: 100)
        let outputs = parser.parse(ByteBuffer(bytes: bytes.prefix(bytes.count - 100)))
        #expect(Self.describe(outputs) == ["message 2 " + String(decoding: WebSocketBytes.payload(0, length: 100), as: UTF8.self),
                                           "ping ping", "error webSocketMessageTooLarge"])
        let error = try #require(Self.error(in: outputs))
        #expect(error.description.contains("frame 4"))
        #expect(error.description.contains("110 bytes"))
        #expect(parser.parse(ByteBuffer(bytes: bytes.suffix(100))).isEmpty)
    }

    @Test func maskingRulesDependOnTheSender() throws {
        let unmasked = WebSocketBytes.binary([1, 2, 3], masked: false)
        let masked = WebSocketBytes.binary([1, 2, 3], masked: true)
        let fromClient = try #require(Self.error(in: Self.parse(unmasked, sender: .client)))
        #expect(fromClient.description.contains("not masked"))
        let fromServer = try #require(Self.error(in: Self.parse(masked, sender: .server)))
        #expect(fromServer.description.contains("is masked"))
    }

    @Test func framingViolationsNameTheFrame() throws {
        let ok = WebSocketBytes.frame(opcode: 2, payload: [1])
        // Each case follows one valid 3-byte frame, so the bad frame is frame 2 at byte 3.
        let cases: [([UInt8], String)] = [
            (WebSocketBytes.frame(opcode: 0, payload: [1]), "continuation frame arrived outside"),
            (WebSocketBytes.frame(opcode: 2, payload: [1], fin: false) + ok, "frame 3 (at byte 6 of the TCP stream) is invalid: a new data frame started before"),
            (WebSocketBytes.frame(opcode: 3, payload: []), "opcode 3 is reserved"),
            (WebSocketBytes.frame(opcode: 2, payload: [], reservedBits: 0b100), "reserved bits 100"),
            (WebSocketBytes.frame(opcode: 9, payload: [], fin: false), "control frame has FIN clear"),
            (WebSocketBytes.frame(opcode: 9, payload: Array(repeating: 0, count: 126)), "126 bytes"),
            (WebSocketBytes.frame(opcode: 8, payload: [3]), "single byte"),
            (WebSocketBytes.frame(opcode: 8, payload: [3, 232, 0xFF]), "not valid UTF-8"),
            ([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1], "most significant bit"),
        ]
        for (frame, expected) in cases {
            let error = try #require(Self.error(in: Self.parse(ok + frame, sender: .server)))
            #expect(error.code == .malformedWebSocketFrame)
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.description.contains("frame 2 (at byte 3 ") || expected.hasPrefix("frame 3"), "\(error)")
        }
    }

    @Test func negotiatedExtensionsAllowReservedBits() {
        let frame = WebSocketBytes.frame(opcode: 2, payload: [7], reservedBits: 0b100)
        #expect(Self.describe(Self.parse(frame, sender: .server, reservedBits: 0b111)) == ["message 2 \u{7}"])
    }

    @Test func emptyCloseAndTrailingBytes() throws {
        let bytes = WebSocketBytes.frame(opcode: 8, payload: []) + [1, 2, 3]
        let outputs = Self.parse(bytes, sender: .server, pieceSize: 2)
        #expect(Self.describe(outputs) == ["close - ", "error bytesAfterWebSocketClose"])
        #expect(try #require(Self.error(in: outputs)).description.hasPrefix("3 bytes follow"))
    }

    @Test func streamEndingInsideAMessageIsReported() throws {
        let fragmented = WebSocketBytes.frame(opcode: 2, payload: [1, 2], fin: false)
        let first = try #require(Self.error(in: Self.parse(fragmented, sender: .server)))
        #expect(first.code == .incompleteWebSocketMessage)
        let cut = Array(WebSocketBytes.frame(opcode: 2, payload: [1, 2, 3]).dropLast())
        let second = try #require(Self.error(in: Self.parse(cut, sender: .server)))
        #expect(second.description.contains("4 bytes of it"))
    }
}

@Suite struct WebSocketMaskingKeyTests {
    @Test(arguments: [0, 1, 3, 7, 8, 9, 15, 16, 17, 1000, 4099])
    func wordWideUnmaskMatchesBytewise(length: Int) {
        let key = WebSocketMaskingKey(0xA1, 0x02, 0xF3, 0x44)
        let payload = WebSocketBytes.payload(length, length: length)
        var buffer = ByteBufferAllocator().buffer(capacity: length + 3)
        buffer.writeBytes([9, 9, 9])  // so the readable bytes start unaligned
        buffer.moveReaderIndex(forwardBy: 3)
        buffer.writeBytes(payload)
        key.unmask(&buffer)
        #expect(Array(buffer.readableBytesView) == payload.enumerated().map { $1 ^ key[$0] })
        key.unmask(&buffer)
        #expect(Array(buffer.readableBytesView) == payload)
    }
}
