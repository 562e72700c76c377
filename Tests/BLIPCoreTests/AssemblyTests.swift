import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing

/// Frames built by hand with an ``OutboundCodec``, fed to a ``DirectionDecoder``: the story of
/// message assembly (wire-format §2.1, §2.2, §4.4, §5).
@Suite("Message assembly")
struct AssemblyTests {
    /// Encodes frames on one running codec, as a sender would.
    final class Sender {
        let codec = OutboundCodec()
        func frame(_ number: MessageNumber, _ type: MessageType, _ chunk: ByteBuffer,
                   compressed: Bool = false, more: Bool = false, noReply: Bool = false) throws -> ByteBuffer {
            var out = ByteBuffer()
            try codec.encodeFrame(number: number, flags: FrameFlags(type: type, compressed: compressed, noReply: noReply, moreComing: more),
                                  chunk: chunk, into: &out)
            return out
        }
    }

    static func stream(_ properties: Properties, _ body: String) -> ByteBuffer {
        var message = BLIPMessage(type: .request, properties: properties)
        message.body = ByteBuffer(text: body)
        return message.encodedStream()
    }

    @Test("interleaved frames of two requests assemble separately, in their own order")
    func interleaved() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        var one = Self.stream(["Profile": "a"], "first body")
        var two = Self.stream(["Profile": "b"], "second body")
        let a1 = one.readSlice(length: 5)!, b1 = two.readSlice(length: 3)!
        #expect(try decoder.receive(sender.frame(1, .request, a1, more: true)).message == nil)
        #expect(try decoder.receive(sender.frame(2, .request, b1, more: true, noReply: true)).startsMessage)
        let first = try decoder.receive(sender.frame(1, .request, one, compressed: true)).message
        let second = try decoder.receive(sender.frame(2, .request, two)).message
        #expect(first?.profile == "a" && String(buffer: first!.body) == "first body")
        #expect(second?.profile == "b" && String(buffer: second!.body) == "second body")
        #expect(first?.frameCount == 2)
        #expect(second?.isNoReply == true)
    }

    @Test("properties that span three frames arrive whole; the head comes with the frame that completes them")
    func propertiesSpanFrames() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        let long = String(repeating: "x", count: 40_000)
        let body = "{" + String(repeating: " ", count: 20_000) + "}"
        var stream = Self.stream(["Profile": "rev", "history": long], body)
        var heads = 0
        var message: BLIPMessage?
        while stream.readableBytes > 0 {
            let chunk = stream.readSlice(length: min(16_000, stream.readableBytes))!
            let decoded = try decoder.receive(sender.frame(1, .request, chunk, compressed: true, more: stream.readableBytes > 0))
            if let head = decoded.head {
                heads += 1
                #expect(head.properties.profile == "rev")
                #expect(decoded.message == nil && stream.readableBytes < 24_000)
            }
            message = decoded.message ?? message
        }
        #expect(heads == 1)
        #expect(message?.properties["history"] == long)
        #expect(message.map { String(buffer: $0.body) } == body)
    }

    @Test("a request number that skips ahead is fatal; so is one already finished")
    func requestNumbering() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        _ = try decoder.receive(sender.frame(1, .request, Self.stream([:], "")))
        #expect { try decoder.receive(sender.frame(3, .request, Self.stream([:], ""))) }
            throws: { ($0 as? BLIPError)?.code == .requestNumberGap && ($0 as! BLIPError).isFatal }
        let again = DirectionDecoder()
        let sender2 = Sender()
        _ = try again.receive(sender2.frame(1, .request, Self.stream([:], "")))
        #expect { try again.receive(sender2.frame(1, .request, Self.stream([:], ""))) }
            throws: { ($0 as? BLIPError)?.code == .requestAlreadyFinished }
    }

    @Test("replies need a pending request: a late one is ignored after the codec ran, a too-high one is fatal")
    func replies() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        decoder.expectReply(to: 1)
        decoder.expectReply(to: 2)
        let reply = try decoder.receive(sender.frame(2, .response, Self.stream([:], "ok")))
        #expect(reply.message?.type == .response)
        let duplicate = try decoder.receive(sender.frame(2, .response, Self.stream([:], "again"), compressed: true))
        guard case .ignored(let error) = duplicate.outcome else {
            Issue.record("a second reply to #2 was not ignored")
            return
        }
        #expect(error.code == .replyWithoutRequest && !error.isFatal)
        // The codec ran on the ignored frame, so the next compressed frame still decodes.
        let next = try decoder.receive(sender.frame(1, .response, Self.stream([:], "again"), compressed: true))
        #expect(next.message.map { String(buffer: $0.body) } == "again")
        #expect { try decoder.receive(sender.frame(9, .response, Self.stream([:], ""))) }
            throws: { ($0 as? BLIPError)?.code == .replyNumberTooHigh }
    }

    @Test("a reply is an error when its first frame says ERR")
    func flagsFromFirstFrame() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        decoder.expectReply(to: 1)
        var stream = Self.stream(["Error-Domain": "HTTP", "Error-Code": "404"], "missing")
        _ = try decoder.receive(sender.frame(1, .error, stream.readSlice(length: 10)!, more: true))
        let done = try decoder.receive(sender.frame(1, .response, stream))
        #expect(done.message?.type == .error)
        #expect(done.message?.properties["Error-Code"] == "404")
    }

    @Test("an undefined frame type is ignored without touching the codec")
    func undefinedType() throws {
        let decoder = DirectionDecoder()
        let decoded = try decoder.receive(hexBuffer("01 03 00 00 00 00 00"))
        guard case .ignored(let error) = decoded.outcome else {
            Issue.record("type 3 was not ignored")
            return
        }
        #expect(error.code == .unknownFrameType)
        #expect(decoder.checksum == 0)
    }

    @Test("a compressed frame with an empty payload yields nothing and leaves the inflater alone (§3.5)")
    func emptyCompressedPayload() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        var stream = Self.stream(["Profile": "getAttachment"], "attachment bytes")
        let first = try sender.frame(1, .request, stream.readSlice(length: 8)!, compressed: true, more: true)
        _ = try decoder.receive(first)
        // Hand-made: compressed flag, empty payload, checksum unchanged.
        var empty = ByteBuffer()
        BLIPFrame.writeHeader(number: 1, flags: FrameFlags(type: .request, compressed: true, moreComing: true), to: &empty)
        empty.writeInteger(decoder.checksum, endianness: .big)
        #expect(try decoder.receive(empty).payloadBytes == 0)
        let last = try decoder.receive(sender.frame(1, .request, stream, compressed: true))
        #expect(last.message.map { String(buffer: $0.body) } == "attachment bytes")
    }

    @Test("the encoder never sends an empty compressed payload")
    func encoderClearsCompressedOnEmptyChunk() throws {
        var out = ByteBuffer()
        let flags = try OutboundCodec().encodeFrame(number: 1, flags: FrameFlags(type: .request, compressed: true),
                                                    chunk: ByteBuffer(), into: &out)
        #expect(!flags.isCompressed)
        #expect(out.readableBytes == 2 + 4)
    }

    @Test("limits: message size and decompression bombs are fatal")
    func limits() throws {
        var limits = BLIPLimits()
        limits.maxMessageSize = 1000
        let sender = Sender()
        let decoder = DirectionDecoder(limits: limits)
        #expect { try decoder.receive(sender.frame(1, .request, Self.stream([:], String(repeating: "a", count: 2000)))) }
            throws: { ($0 as? BLIPError)?.code == .messageTooLarge }

        limits = BLIPLimits()
        limits.maxInflatedFrameSize = 64 * 1024
        let bomb = Sender()
        let zeros = ByteBuffer(repeating: 0, count: 1_000_000)
        #expect { try DirectionDecoder(limits: limits).receive(bomb.frame(1, .request, zeros, compressed: true)) }
            throws: { ($0 as? BLIPError)?.code == .inflatedFrameTooLarge }
    }

    @Test("a peer that never answers cannot grow the awaited-reply table: the oldest are forgotten, their late replies ignored")
    func awaitedRepliesAreBounded() throws {
        let decoder = Self.decoder(awaitingAtMost: 4)
        for number in 1...10 { decoder.expectReply(to: MessageNumber(number)) }
        #expect(decoder.forgottenReplies == 6)
        let sender = Sender()
        try Self.expectIgnoredAsForgotten(2, by: decoder, from: sender)
        let kept = try decoder.receive(sender.frame(10, .response, Self.stream([:], "kept")))
        #expect(kept.message.map { String(buffer: $0.body) } == "kept")
    }

    @Test("past the bound the oldest request still awaited is forgotten, not one already answered")
    func theOldestUnansweredIsForgotten() throws {
        let decoder = Self.decoder(awaitingAtMost: 4)
        let sender = Sender()
        for number in 1...4 { decoder.expectReply(to: MessageNumber(number)) }
        for answered in [1, 3] as [MessageNumber] {
            #expect(try decoder.receive(sender.frame(answered, .response, Self.stream([:], "ok"))).message != nil)
        }
        for number in 5...7 { decoder.expectReply(to: MessageNumber(number)) }
        // Awaited: 2, 4, 5, 6, 7 is one too many; 2 is the oldest of them.
        #expect(decoder.forgottenReplies == 1)
        try Self.expectIgnoredAsForgotten(2, by: decoder, from: sender)
        for number in 4...7 {
            let reply = try decoder.receive(sender.frame(MessageNumber(number), .response, Self.stream([:], "r\(number)")))
            #expect(reply.message.map { String(buffer: $0.body) } == "r\(number)", "#\(number) still awaited")
        }
        // With every one answered, the next ones are kept up to the bound again.
        for number in 8...12 { decoder.expectReply(to: MessageNumber(number)) }
        #expect(decoder.forgottenReplies == 2)
        #expect(try decoder.receive(sender.frame(9, .response, Self.stream([:], "ok"))).message != nil)
    }

    @Test("requests registered far apart: the bound forgets the oldest at once, not by walking the gap")
    func awaitedRepliesFarApart() throws {
        let decoder = Self.decoder(awaitingAtMost: 2)
        let sender = Sender()
        let numbers: [MessageNumber] = [1, 1 << 40, 1 << 41]
        for number in numbers { decoder.expectReply(to: number) }
        // The third is one too many: #1 is forgotten, and the search for the next oldest must
        // not step through the 2⁴⁰ numbers between them (it did, for hours).
        #expect(decoder.forgottenReplies == 1)
        try Self.expectIgnoredAsForgotten(1, by: decoder, from: sender)
        // Answering the oldest still awaited moves the search on to the next one, far above it.
        #expect(try decoder.receive(sender.frame(1 << 40, .response, Self.stream([:], "a"))).message != nil)
        decoder.expectReply(to: 1 << 42)
        decoder.expectReply(to: 1 << 43)
        #expect(decoder.forgottenReplies == 2, "#2⁴¹, the oldest left, is forgotten")
        for number: MessageNumber in [1 << 42, 1 << 43] {
            #expect(try decoder.receive(sender.frame(number, .response, Self.stream([:], "b"))).message != nil)
        }
    }

    /// A decoder that awaits at most `count` replies (``BLIPLimits/maxAwaitedReplies``).
    static func decoder(awaitingAtMost count: Int) -> DirectionDecoder {
        var limits = BLIPLimits()
        limits.maxAwaitedReplies = count
        return DirectionDecoder(limits: limits)
    }

    /// A late reply to request `number`, whose wait was forgotten, is decoded and then ignored as
    /// answering no pending request.
    static func expectIgnoredAsForgotten(_ number: MessageNumber, by decoder: DirectionDecoder, from sender: Sender,
                                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let late = try decoder.receive(sender.frame(number, .response, stream([:], "late")))
        guard case .ignored(let error) = late.outcome else {
            return #expect(Bool(false), "the forgotten request's reply #\(number) is ignored", sourceLocation: sourceLocation)
        }
        #expect(error.code == .replyWithoutRequest, sourceLocation: sourceLocation)
    }

    @Test("many large messages started and never finished: the direction fails at its in-progress bounds")
    func inProgressBounds() throws {
        var limits = BLIPLimits()
        limits.maxBytesInProgress = 3 << 20
        let sender = Sender()
        let decoder = DirectionDecoder(limits: limits)
        let zeros = ByteBuffer(repeating: 0, count: 1 << 20)
        for number in 1...3 {
            _ = try decoder.receive(sender.frame(MessageNumber(number), .request, zeros, compressed: true, more: true))
        }
        #expect(decoder.bytesInProgress == 3 << 20)
        #expect { try decoder.receive(sender.frame(4, .request, zeros, compressed: true, more: true)) }
            throws: { ($0 as? BLIPError)?.code == .tooMuchInProgress }
        #expect(decoder.bytesInProgress == 0 && decoder.messagesInProgress == 0)

        limits = BLIPLimits()
        limits.maxMessagesInProgress = 2
        let counted = DirectionDecoder(limits: limits)
        let tiny = ByteBuffer(string: "x"), second = Sender()
        _ = try counted.receive(second.frame(1, .request, tiny, more: true))
        _ = try counted.receive(second.frame(2, .request, tiny, more: true))
        #expect { try counted.receive(second.frame(3, .request, tiny, more: true)) }
            throws: { ($0 as? BLIPError)?.code == .tooMuchInProgress }
    }

    @Test("finished messages give their bytes back to the in-progress budget")
    func inProgressIsReleased() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        var stream = Self.stream(["Profile": "a"], String(repeating: "b", count: 5000))
        let first = stream.readSlice(length: 1000)!
        _ = try decoder.receive(sender.frame(1, .request, first, more: true))
        #expect(decoder.bytesInProgress == 1000)
        #expect(try decoder.receive(sender.frame(1, .request, stream)).message != nil)
        #expect(decoder.bytesInProgress == 0)
    }

    /// Sends `stream` as request `number` in frames of `chunk` bytes, compressed; returns the
    /// decoder's reserved assembly bytes after each frame and the message.
    static func send(_ stream: ByteBuffer, as number: MessageNumber, chunk: Int, with sender: Sender,
                     to decoder: DirectionDecoder) throws -> (reserved: [Int], message: BLIPMessage?) {
        var rest = stream
        var reserved: [Int] = []
        var message: BLIPMessage?
        while rest.readableBytes > 0 {
            let piece = rest.readSlice(length: min(chunk, rest.readableBytes))!
            message = try decoder.receive(sender.frame(number, .request, piece, compressed: true, more: rest.readableBytes > 0)).message
            reserved.append(decoder.reservedAssemblyBytes)
        }
        return (reserved, message)
    }

    @Test("a large message's buffer is sized at its second frame for the direction's last multi-frame message, and given back when it ends")
    func assemblyIsReservedFromTheLastLargeMessage() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        let body = String(repeating: "{\"_id\":\"doc\",\"qty\":5},", count: 40_000)
        let stream = Self.stream(["Profile": "echo"], body)
        // The first large message of the direction: nothing to size it from.
        let first = try Self.send(stream, as: 1, chunk: 16_000, with: sender, to: decoder)
        #expect(first.reserved.allSatisfy { $0 == 0 })
        #expect(first.message.map { String(buffer: $0.body) } == body)
        // The next one is sized from it at its second frame: all of it, less the first frame, ahead.
        let second = try Self.send(stream, as: 2, chunk: 16_000, with: sender, to: decoder)
        #expect(second.reserved[0] == 0)
        #expect(second.reserved[1] == stream.readableBytes - 16_000)
        #expect(second.reserved.dropFirst().dropLast().allSatisfy { $0 == stream.readableBytes - 16_000 })
        #expect(second.reserved.last == 0)
        #expect(second.message.map { String(buffer: $0.body) } == body)
        #expect(decoder.bytesInProgress == 0 && decoder.messagesInProgress == 0)
    }

    @Test("a sender that starts many messages after a large one gets no more reserved than the limit; they still assemble")
    func reservationIsBounded() throws {
        var limits = BLIPLimits()
        limits.maxReservedAssemblyBytes = 1 << 20
        let sender = Sender()
        let decoder = DirectionDecoder(limits: limits)
        let large = Self.stream(["Profile": "big"], String(repeating: "x", count: 400_000))
        _ = try Self.send(large, as: 1, chunk: 16_000, with: sender, to: decoder)
        // Ten messages started, two frames each, none finished: only two fit the 1 MiB budget.
        let small = Self.stream(["Profile": "small"], String(repeating: "a", count: 2_900))
        var rests: [ByteBuffer] = []
        for number in 2...11 {
            var rest = small
            for _ in 0..<2 {
                _ = try decoder.receive(sender.frame(MessageNumber(number), .request, rest.readSlice(length: 1000)!,
                                                     compressed: true, more: true))
            }
            rests.append(rest)
        }
        let ahead = large.readableBytes - 1000
        #expect(decoder.reservedAssemblyBytes == 2 * ahead)
        #expect(decoder.reservedAssemblyBytes <= limits.maxReservedAssemblyBytes)
        for (number, rest) in zip(2...11, rests) {
            let last = try decoder.receive(sender.frame(MessageNumber(number), .request, rest, compressed: true))
            #expect(last.message.map { String(buffer: $0.body) } == String(repeating: "a", count: 2_900))
        }
        #expect(decoder.reservedAssemblyBytes == 0)
    }

    @Test("MSG #0 is no request number: it is refused as such, not as a finished request")
    func requestNumberZero() throws {
        #expect { try DirectionDecoder().receive(Sender().frame(0, .request, Self.stream([:], ""))) }
            throws: { ($0 as? BLIPError)?.code == .invalidMessageNumber }
    }

    @Test("a bomb spread over frames stops at its message's limit: nothing past it is inflated or kept")
    func bombAcrossFrames() throws {
        var limits = BLIPLimits()
        limits.maxMessageSize = 1 << 20
        let sender = Sender()
        let decoder = DirectionDecoder(limits: limits)
        let zeros = ByteBuffer(repeating: 0, count: 700_000)  // each frame inflates within the 8 MiB frame cap
        var head = Self.stream(["Profile": "rev"], "")
        head.writeImmutableBuffer(zeros)
        #expect(try decoder.receive(sender.frame(1, .request, head, compressed: true, more: true)).startsMessage)
        #expect(decoder.messagesInProgress == 1)
        #expect { try decoder.receive(sender.frame(1, .request, zeros, compressed: true, more: true)) }
            throws: { ($0 as? BLIPError)?.code == .messageTooLarge }
        // The direction is broken: the partial message is gone, and a later frame is refused unread.
        #expect(decoder.messagesInProgress == 0)
        #expect(decoder.failure?.code == .messageTooLarge)
        #expect { try decoder.receive(ByteBuffer(bytes: [0xFF])) } throws: { ($0 as? BLIPError)?.code == .messageTooLarge }
    }

    @Test("the receiver asks for an ACK once 50,000 bytes of a message are unacknowledged (§5)")
    func ackRule() throws {
        let sender = Sender()
        let decoder = DirectionDecoder()
        var random = SeededRandom(seed: 3)
        var acks: [AckInfo] = []
        var total = 0
        for index in 0..<12 {
            let chunk = index == 0
                ? Self.stream([:], String(repeating: "b", count: 8999))
                : ByteBuffer(bytes: random.bytes(10_000))
            let decoded = try decoder.receive(sender.frame(1, .request, chunk, more: index < 11))
            total += decoded.wireBytes
            if let ack = decoded.ackToSend { acks.append(ack) }
        }
        // Frames carry 9,004 then 10,004 bytes after their headers (payload + checksum).
        #expect(acks.map(\.bytes) == [59_024, 109_044])
        #expect(acks.allSatisfy { $0.type == .ackRequest && $0.number == 1 })
        #expect(total == 119_048)
    }
}
