import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing
import Foundation

/// The vectors of wire-format reference §8, decoded and re-encoded.
@Suite("Reference vectors (wire-format §8)")
struct ReferenceVectorTests {
    static let croutonFrame1 = "01 20 17 \"Shoe-Size\" 00 \"8.5\" 00 \"Hair\" 00 \"yes\" 00 \"Hi!\" 60 31 fe 1e"
    static let croutonFrame2 = "02 20 17 \"Shoe-Size\" 00 \"8.5\" 00 \"Hair\" 00 \"yes\" 00 \"Hi!\" 0c 49 97 95"
    static let compressedFrame1 = "01 28 12 0f ce c8 4f d5 0d ce ac 4a 65 b0 d0 33 65 f0 48 cc 2c 62 a8 4c 2d 66 f0 c8 54 04 00 60 31 fe 1e"
    static let compressedFrame2 = "02 28 12 c7 2d 05 00 0c 49 97 95"

    static var croutonMessage: BLIPMessage {
        .request(profile: nil, properties: ["Shoe-Size": "8.5", "Hair": "yes"], body: ByteBuffer(text: "Hi!"), noReply: true)
    }

    @Test("the 33-byte crouton frame: MSG #1, NoReply, two properties, body Hi!")
    func croutonFrame() throws {
        let bytes = hexBuffer(Self.croutonFrame1)
        #expect(bytes.readableBytes == 33)
        let frame = try BLIPFrame.parse(bytes)
        #expect(frame.number == 1)
        #expect(frame.flags.type == .request)
        #expect(frame.flags.isNoReply && !frame.flags.isCompressed && !frame.flags.hasMoreComing)
        #expect(frame.checksum == 0x6031_fe1e)

        let decoded = try DirectionDecoder().receive(bytes)
        let message = try #require(decoded.message)
        #expect(message.properties == ["Shoe-Size": "8.5", "Hair": "yes"])
        #expect(String(buffer: message.body) == "Hi!")
        #expect(decoded.startsMessage)
        #expect(decoded.head == nil, "a message whole in one frame comes only as a message")
    }

    @Test("the running CRC covers both messages: the second frame's checksum is not per frame")
    func runningChecksumPair() throws {
        let decoder = DirectionDecoder()
        _ = try decoder.receive(hexBuffer(Self.croutonFrame1))
        let second = try decoder.receive(hexBuffer(Self.croutonFrame2))
        #expect(second.message?.number == 2)
        #expect(decoder.checksum == 0x0c49_9795)

        // The same second frame on a fresh connection fails its checksum.
        #expect { try DirectionDecoder().receive(hexBuffer(Self.croutonFrame2.replacingOccurrences(of: "02 20", with: "01 20"))) }
            throws: { ($0 as? BLIPError)?.code == .badChecksum }
    }

    @Test("the compressed pair inflates on one context; the second alone does not")
    func compressedPair() throws {
        let decoder = DirectionDecoder()
        let first = try decoder.receive(hexBuffer(Self.compressedFrame1))
        let second = try decoder.receive(hexBuffer(Self.compressedFrame2))
        #expect(first.message?.properties == ["Shoe-Size": "8.5", "Hair": "yes"])
        #expect(String(buffer: second.message!.body) == "Hi!")
        #expect(second.wireBytes == 5 + 4)
        #expect(second.payloadBytes == 27)
        #expect(second.message?.isCompressed == true)

        var lone = hexBuffer(Self.compressedFrame2)
        lone.setInteger(UInt8(1), at: 0)
        #expect { try DirectionDecoder().receive(lone) } throws: { $0 is BLIPError }
    }

    @Test("the encoder reproduces the uncompressed pair byte for byte")
    func encodeUncompressedPair() throws {
        let queue = OutboundQueue()
        queue.enqueueRequest(Self.croutonMessage)
        queue.enqueueRequest(Self.croutonMessage)
        #expect(hexString(try #require(try queue.nextFrame()).bytes) == hexString(hexBuffer(Self.croutonFrame1)))
        #expect(hexString(try #require(try queue.nextFrame()).bytes) == hexString(hexBuffer(Self.croutonFrame2)))
        #expect(try queue.nextFrame() == nil)
    }

    /// §8.3: the compressed bytes depend on the zlib build (zlib-ng and others deflate
    /// differently, all validly), so the encoder is checked by what its frames say, not by the
    /// reference's exact bytes: headers, checksums (over the uncompressed stream, so fixed), and
    /// the messages a fresh decoder reads back, the second only on the first's deflate context.
    @Test("the encoder's compressed pair decodes to the reference messages with the reference checksums")
    func encodeCompressedPair() throws {
        var message = Self.croutonMessage
        message.flags.isCompressed = true
        let queue = OutboundQueue()
        queue.enqueueRequest(message)
        queue.enqueueRequest(message)
        let first = try #require(try queue.nextFrame()).bytes
        let second = try #require(try queue.nextFrame()).bytes
        #expect(try queue.nextFrame() == nil)
        for (frame, reference) in [(first, Self.compressedFrame1), (second, Self.compressedFrame2)] {
            let expected = hexBuffer(reference)
            #expect(hexString(frame.getSlice(at: 0, length: 2)!) == hexString(expected.getSlice(at: 0, length: 2)!),
                    "number and flags (MSG | Compressed | NoReply)")
            #expect(frame.getInteger(at: frame.readableBytes - 4, as: UInt32.self)
                    == expected.getInteger(at: expected.readableBytes - 4, as: UInt32.self), "the running CRC")
        }
        let decoder = DirectionDecoder()
        for (frame, number) in [(first, MessageNumber(1)), (second, 2)] {
            let decoded = try #require(try decoder.receive(frame).message)
            #expect(decoded.number == number)
            #expect(decoded.isCompressed && decoded.isNoReply)
            #expect(decoded.properties == ["Shoe-Size": "8.5", "Hair": "yes"])
            #expect(String(buffer: decoded.body) == "Hi!")
        }
        #expect(decoder.checksum == 0x0c49_9795)
        var lone = second
        lone.setInteger(UInt8(1), at: 0)
        #expect { try DirectionDecoder().receive(lone) } throws: { $0 is BLIPError }
    }

    /// §8.1 item 1, crouton `test_blip.cc` "BLIP MessageBuilder": three properties (the third
    /// added after the first two) and a body, urgent.
    @Test("crouton's MessageBuilder vector: 0x22, three properties in order, then the body")
    func croutonMessageBuilder() throws {
        let message = BLIPMessage.request(profile: nil, properties: ["Shoe-Size": "8.5", "Hair": "yes", "Eyes": "Brown"],
                                          body: ByteBuffer(text: "Hi! This is the body."), urgent: true)
        let stream = hexBuffer("22 \"Shoe-Size\" 00 \"8.5\" 00 \"Hair\" 00 \"yes\" 00 \"Eyes\" 00 \"Brown\" 00 \"Hi! This is the body.\"")
        #expect(hexString(message.encodedStream()) == hexString(stream))

        let queue = OutboundQueue()
        queue.enqueueRequest(message)
        let bytes = try #require(try queue.nextFrame()).bytes
        let frame = try BLIPFrame.parse(bytes)
        #expect(frame.number == 1)
        #expect(frame.flags.rawValue == FrameFlags.urgent, "MSG (0) | Urgent")
        #expect(hexString(frame.payload) == hexString(stream))
        var checksum = RunningChecksum()
        checksum.update(stream)
        #expect(frame.checksum == checksum.value)

        let decoded = try #require(try DirectionDecoder().receive(bytes).message)
        #expect(decoded.properties.pairs.map(\.key) == ["Shoe-Size", "Hair", "Eyes"])
        #expect(decoded.properties["Eyes"] == "Brown")
        #expect(String(buffer: decoded.body) == "Hi! This is the body.")
        #expect(decoded.isUrgent)
    }

    /// §8.1 item 1, crouton `test_blip.cc` "BLIP Send And Receive Message", which sends its own
    /// README: our longest document, docs/performance.md (tens of kilobytes: many frames), sent as a no-reply request with no properties, plain and
    /// compressed, arrives whole as message 1.
    @Test("crouton's send-and-receive round trip: a document of ours as the body, uncompressed and compressed",
          arguments: [false, true])
    func croutonReadmeRoundTrip(compressed: Bool) throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/performance.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        #expect(text.utf8.count > 20_000, "large enough to need several frames")
        let pair = EndpointPair()
        pair.client.send(request: .request(profile: nil, body: ByteBuffer(text: text), compressed: compressed, noReply: true))
        let received = try pair.pump().toServer
        let frames = pair.wire.filter { $0.direction == .clientToServer }
        #expect(frames.count > 1)
        let message = try #require(received.first)
        #expect(received.count == 1)
        #expect(message.number == 1)
        #expect(message.flags.rawValue == FrameFlags.noReply | (compressed ? FrameFlags.compressed : 0))
        #expect(message.properties.isEmpty)
        #expect(String(buffer: message.body) == text)
        if compressed {
            #expect(frames.map(\.bytes.readableBytes).reduce(0, +) < text.utf8.count, "the text deflates")
        }
    }

    /// §8.1 item 3, go-blip `message_test.go` TestMessageEncoding: two properties behind 0x25
    /// and a sentence as the body (the file's commented-out compressed vector is BLIP v2 and is
    /// not used, as the reference says).
    @Test("go-blip's message vector: 0x25, Content-Type and X-Weather, then the body; it decodes back")
    func goBlipMessageVector() throws {
        let sentence = "The white knight is sliding down the poker. He balances very badly."
        let stream = hexBuffer("25 \"Content-Type\" 00 \"ham/rye\" 00 \"X-Weather\" 00 \"rainy\" 00 \"\(sentence)\"")
        let message = BLIPMessage.request(profile: nil, properties: ["Content-Type": "ham/rye", "X-Weather": "rainy"],
                                          body: ByteBuffer(text: sentence))
        #expect(hexString(message.encodedStream()) == hexString(stream))

        // The vector as the payload of a frame from a peer: MSG #1, its CRC, decoded.
        var frame = ByteBuffer()
        BLIPFrame.writeHeader(number: 1, flags: FrameFlags(type: .request), to: &frame)
        frame.writeImmutableBuffer(stream)
        var checksum = RunningChecksum()
        checksum.update(stream)
        frame.writeInteger(checksum.value)
        let decoded = try #require(try DirectionDecoder().receive(frame).message)
        #expect(decoded.properties == ["Content-Type": "ham/rye", "X-Weather": "rainy"])
        #expect(String(buffer: decoded.body) == sentence)

        // TestMessageEncodingCompressed: the same message compressed survives the round trip.
        let pair = EndpointPair()
        pair.client.send(request: .request(profile: nil, properties: ["Content-Type": "ham/rye", "X-Weather": "rainy"],
                                           body: ByteBuffer(text: sentence), compressed: true))
        let received = try #require(try pair.pump().toServer.first)
        #expect(received.isCompressed)
        #expect(received.properties == decoded.properties)
        #expect(received.body == decoded.body)
    }

    @Test("ACKMSG for request 5 after 50010 bytes is 05 34 da 86 03")
    func ackVector() throws {
        let bytes = BLIPFrame.ack(.ackRequest, number: 5, bytes: 50010)
        #expect(hexString(bytes) == "0534da8603")
        let decoded = try DirectionDecoder().receive(bytes)
        guard case .ack(let ack) = decoded.outcome else {
            Issue.record("not an ACK")
            return
        }
        #expect(ack == AckInfo(type: .ackRequest, number: 5, bytes: 50010))
        #expect(decoded.flags.isUrgent && decoded.flags.isNoReply)
    }
}
