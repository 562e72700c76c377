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

    @Test("the encoder reproduces the compressed pair with LiteCore's zlib settings")
    func encodeCompressedPair() throws {
        var message = Self.croutonMessage
        message.flags.isCompressed = true
        let queue = OutboundQueue()
        queue.enqueueRequest(message)
        queue.enqueueRequest(message)
        #expect(hexString(try #require(try queue.nextFrame()).bytes) == hexString(hexBuffer(Self.compressedFrame1)))
        #expect(hexString(try #require(try queue.nextFrame()).bytes) == hexString(hexBuffer(Self.compressedFrame2)))
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
