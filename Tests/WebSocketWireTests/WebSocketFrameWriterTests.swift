import NIOCore
import Testing
import WebSocketWire

/// Frames written here read back through the one header parser, masked or not, in all three
/// length forms; the eight-byte masking agrees with RFC 6455 §5.3's byte-by-byte rule.
@Suite struct WebSocketFrameWriterTests {
    @Test(arguments: [0, 125, 126, 65_535, 65_536])
    func framesReadBackWithTheirLengthsAndMasks(length: Int) throws {
        let payload = ByteBuffer(bytes: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for key in [nil, WebSocketMaskingKey(0xDE, 0xAD, 0xBE, 0xEF)] {
            let frame = WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary, payload: payload, mask: key)
            let header = try #require(WebSocketFrameHeader(parsing: frame.readableBytesView))
            #expect(header.fin && header.opcode == WebSocketFrameHeader.binary && header.payloadLength == UInt64(length))
            #expect(header.maskingKey == key)
            #expect(header.headerLength == WebSocketFrameWriter.headerLength(payload: length, masked: key != nil))
            var body = frame.getSlice(at: frame.readerIndex + header.headerLength, length: length)!
            if let key {
                // RFC 6455 §5.3: octet i of the masked data is octet i of the payload XOR key[i mod 4].
                #expect(Array(body.readableBytesView).enumerated().allSatisfy { $0.element == payload.getInteger(at: $0.offset, as: UInt8.self)! ^ key[$0.offset] })
                key.unmask(&body)
            }
            #expect(body == payload)
        }
    }

    /// The relay's unmasked copy of a client frame: every byte by RFC 6455 §5.3's rule, at every
    /// length around the 32-byte vector and eight-byte word steps, from a slice that does not
    /// start at its storage's start; the masked payload itself is left as it was. Unmasking in
    /// place gives the same bytes.
    @Test func anAppliedCopyUnmasksEveryByteAndLeavesThePayloadAlone() {
        let key = WebSocketMaskingKey(0x12, 0x9A, 0xF0, 0x07)
        var storage = ByteBuffer(bytes: (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) })
        storage.moveReaderIndex(forwardBy: 3)
        for length in 0...150 {
            let masked = storage.getSlice(at: storage.readerIndex, length: length)!
            let before = Array(masked.readableBytesView)
            let expected = before.enumerated().map { $0.element ^ key[$0.offset] }
            let copy = key.applied(to: masked, allocator: ByteBufferAllocator())
            #expect(copy.readableBytes == length)
            #expect(Array(copy.readableBytesView) == expected, "length \(length)")
            #expect(Array(masked.readableBytesView) == before)
            var inPlace = ByteBuffer(bytes: before)
            key.unmask(&inPlace)
            #expect(Array(inPlace.readableBytesView) == expected, "in place, length \(length)")
        }
    }

    @Test func aCloseReasonIsCutToFitAtACharacterBoundary() {
        let payload = WebSocketFrameWriter.closePayload(code: 1011, reason: String(repeating: "é", count: 100))
        #expect(payload.count <= 125)
        #expect(String(validating: payload.dropFirst(2), as: UTF8.self) != nil)
        #expect(WebSocketFrameWriter.closePayload(code: nil, reason: "x").isEmpty)
    }

    @Test func wireOrderKeysAndDeterministicKeysAreStable() {
        #expect(WebSocketMaskingKey(wireOrder: 0x0102_0304) == WebSocketMaskingKey(1, 2, 3, 4))
        #expect(WebSocketMaskingKey.deterministic(index: 5) == WebSocketMaskingKey.deterministic(index: 5))
        #expect(WebSocketMaskingKey.deterministic(index: 5) != WebSocketMaskingKey.deterministic(index: 6))
    }
}
