import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

/// A receiver told that nothing reads a message's body (``DirectionDecoder/stopKeepingBody(of:number:)``)
/// still runs every frame through the inflater and the running CRC (wire-format §2.4, §3.2), holds
/// only the properties, and reports the body's length.
@Suite("Bodies not kept")
struct UnkeptBodyTests {
    typealias Sender = AssemblyTests.Sender

    static let body = String(repeating: "{\"_id\":\"doc\",\"qty\":5,\"tags\":[\"a\",\"b\"]},", count: 4_000)

    /// Sends `stream` as request `number` in compressed frames of `chunk` bytes; after the frame
    /// that brings the head, tells the decoder to stop keeping the body when `unkept`.
    static func send(_ stream: ByteBuffer, as number: MessageNumber, chunk: Int = 16_000, unkept: Bool, preview: Int = 0,
                     with sender: Sender, to decoder: DirectionDecoder) throws -> (message: BLIPMessage?, held: [Int]) {
        var rest = stream
        var held: [Int] = []
        var message: BLIPMessage?
        while rest.readableBytes > 0 {
            let piece = rest.readSlice(length: min(chunk, rest.readableBytes))!
            let decoded = try decoder.receive(sender.frame(number, .request, piece, compressed: true, more: rest.readableBytes > 0))
            if decoded.head != nil, unkept { #expect(decoder.stopKeepingBody(of: .request, number: number, keepingFirst: preview)) }
            held.append(decoder.bytesInProgress)
            message = decoded.message ?? message
        }
        return (message, held)
    }

    @Test("a body not kept is counted: the message has its properties, an empty body and the body's length")
    func bodyIsCounted() throws {
        let decoder = DirectionDecoder()
        let stream = AssemblyTests.stream(["Profile": "echo", "seq": "1"], Self.body)
        let (message, held) = try Self.send(stream, as: 1, unkept: true, with: Sender(), to: decoder)
        let properties = stream.readableBytes - Self.body.utf8.count
        #expect(message?.properties["seq"] == "1")
        #expect(message?.body.readableBytes == 0)
        #expect(message?.unkeptBodyBytes == Self.body.utf8.count)
        #expect(message?.bodyLength == Self.body.utf8.count)
        #expect(message?.keepsBody == false)
        #expect(message?.streamBytes == stream.readableBytes)
        #expect(message?.frameCount == (stream.readableBytes + 15_999) / 16_000)
        // From the head on, the direction holds the properties alone; nothing once the message ends.
        #expect(held.dropLast().allSatisfy { $0 == properties })
        #expect(held.last == 0)
        #expect(decoder.reservedAssemblyBytes == 0)
    }

    @Test("a preview: the body's first bytes are kept, from the head's frame or the frames after it, the rest counted",
          arguments: [100, 15_000, 40_000, 1_000_000])
    func preview(bytes: Int) throws {
        let decoder = DirectionDecoder()
        let stream = AssemblyTests.stream(["Profile": "echo"], Self.body)
        let (message, held) = try Self.send(stream, as: 1, unkept: true, preview: bytes, with: Sender(), to: decoder)
        let body = Array(Self.body.utf8)
        let kept = min(bytes, body.count)
        #expect(message.map { Array($0.body.readableBytesView) } == Array(body.prefix(kept)))
        #expect(message?.unkeptBodyBytes == body.count - kept)
        #expect(message?.bodyLength == body.count)
        #expect(message?.keepsBody == (kept == body.count))
        // Held while in progress: the properties and as much of the preview as has arrived.
        let properties = stream.readableBytes - body.count
        for (frame, bytesHeld) in held.dropLast().enumerated() {
            #expect(bytesHeld == min(properties + kept, 16_000 * (frame + 1)))
        }
        #expect(held.last == 0)
    }

    @Test("the stream goes on: the next compressed message, which refers back into the unkept body, decodes whole")
    func historySurvives() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        let stream = AssemblyTests.stream(["Profile": "echo"], Self.body)
        _ = try Self.send(stream, as: 1, unkept: true, with: sender, to: decoder)
        let next = try Self.send(stream, as: 2, unkept: false, with: sender, to: decoder)
        #expect(next.message.map { String(buffer: $0.body) } == Self.body)
        #expect(next.message?.unkeptBodyBytes == 0)
        #expect(decoder.checksum == sender.codec.checksum.value)
    }

    @Test("a damaged frame of an unkept body still fails its checksum")
    func checksumIsStillChecked() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        var stream = AssemblyTests.stream(["Profile": "echo"], Self.body)
        let first = stream.readSlice(length: 16_000)!
        _ = try decoder.receive(sender.frame(1, .request, first, compressed: true, more: true))
        #expect(decoder.stopKeepingBody(of: .request, number: 1))
        var damaged = try sender.frame(1, .request, stream.readSlice(length: 16_000)!, more: true)
        let last = damaged.writerIndex - 1
        damaged.setInteger(damaged.getInteger(at: last, as: UInt8.self)! ^ 1, at: last)
        #expect { try decoder.receive(damaged) } throws: { ($0 as? BLIPError)?.code == .badChecksum }
    }

    @Test("the message size limit counts the body not kept: a bomb still stops at its message's limit")
    func sizeLimitCountsUnkeptBytes() throws {
        var limits = BLIPLimits()
        limits.maxMessageSize = 1 << 20
        let sender = Sender()
        let decoder = DirectionDecoder(limits: limits)
        let zeros = ByteBuffer(repeating: 0, count: 700_000)
        var head = AssemblyTests.stream(["Profile": "bulk"], "")
        head.writeImmutableBuffer(zeros)
        _ = try decoder.receive(sender.frame(1, .request, head, compressed: true, more: true))
        #expect(decoder.stopKeepingBody(of: .request, number: 1))
        #expect(decoder.bytesInProgress < 100)
        #expect { try decoder.receive(sender.frame(1, .request, zeros, compressed: true, more: true)) }
            throws: { ($0 as? BLIPError)?.code == .messageTooLarge }
    }

    @Test("before its properties are in, or for a message not in progress, nothing changes")
    func onlyOnceThePropertiesAreIn() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        let long = String(repeating: "x", count: 30_000)
        var stream = AssemblyTests.stream(["Profile": "echo", "history": long], Self.body)
        #expect(!decoder.stopKeepingBody(of: .request, number: 1))
        let decoded = try decoder.receive(sender.frame(1, .request, stream.readSlice(length: 16_000)!, compressed: true, more: true))
        #expect(decoded.head == nil)
        #expect(!decoder.stopKeepingBody(of: .request, number: 1), "the properties span two frames")
        #expect(!decoder.stopKeepingBody(of: .response, number: 1), "no reply #1 in progress")
        let rest = try decoder.receive(sender.frame(1, .request, stream, compressed: true))
        #expect(rest.message.map { String(buffer: $0.body) } == Self.body)
    }

    @Test("an unkept body does not size the next message's buffer")
    func unkeptBodiesReserveNothing() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        let stream = AssemblyTests.stream(["Profile": "echo"], Self.body)
        _ = try Self.send(stream, as: 1, unkept: true, with: sender, to: decoder)
        let next = try AssemblyTests.send(stream, as: 2, chunk: 16_000, with: sender, to: decoder)
        #expect(next.reserved.allSatisfy { $0 == 0 })
        #expect(next.message.map { String(buffer: $0.body) } == Self.body)
    }
}
