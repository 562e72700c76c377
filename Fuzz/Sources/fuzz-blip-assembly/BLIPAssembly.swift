import BLIPCore
import FuzzSupport
import NIOCore

/// Message assembly with interleaving, checked against what was sent: two peers' messages
/// (requests both ways, replies and errors to the other side's requests) are cut into frames at
/// points the input picks, interleaved in the order it picks, and encoded by the real
/// ``OutboundCodec`` (deflated when the message is compressed, running CRC); a
/// ``ConnectionDecoder`` must decode every frame and give back each message exactly as sent:
/// type, number, flags, properties in order, body. A message whose flag byte has bit 3 set is
/// one nobody reads but for a preview (the byte's top four bits × 64 bytes): once its head is in,
/// the decoder is told to keep only that preview of its body, and it must arrive with its
/// properties, the preview and the body's length, while the stream goes on for the messages
/// after it. A raw frame from the input may be injected; its direction is then
/// no longer checked (only not to crash).
///
/// Ops (one byte each, then its arguments):
/// 0 start a request · 1 start a reply or error to a finished request of the other side ·
/// 2, 3 send the next frame of a message in progress · 4 an ACK frame · 5 a raw frame.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var session = Session()
    while !input.isAtEnd {
        let op = input.byte()
        let side = Int(op >> 7)
        switch op & 0x7 {
        case 0: session.startRequest(side: side, input: &input)
        case 1: session.startReply(side: side, input: &input)
        case 2, 3: session.sendFrame(side: side, input: &input)
        case 4: session.sendAck(side: side, input: &input)
        case 5: session.sendRaw(side: side, input: &input)
        default: break
        }
    }
    // Whatever is left goes out in order: every message must arrive whole.
    for side in 0..<2 {
        while !session.senders[side].active.isEmpty {
            var none = FuzzInput([])
            session.sendFrame(side: side, input: &none)
        }
    }
    return 0
}

private struct Outgoing {
    var type: MessageType
    var number: MessageNumber
    var flags: FrameFlags
    var properties: Properties
    var body: [UInt8]
    var stream: ByteBuffer
    var sent = 0
    var sawHead = false
    /// Nobody reads the body but for its first `preview` bytes: the decoder is told so at its head.
    var dropsBody = false
    var preview = 0
    var bodyDropped = false
}

private struct Sender {
    let codec = OutboundCodec()
    var nextRequest: MessageNumber = 1
    var active: [Outgoing] = []
    /// Requests this side finished sending that expect a reply from the other side.
    var awaitingReply: [MessageNumber] = []
    /// A raw frame went this way: results are no longer checked.
    var tainted = false
}

private struct Session {
    let decoder = ConnectionDecoder()
    var senders = [Sender(), Sender()]
    static let maxActive = 64

    mutating func startRequest(side: Int, input: inout FuzzInput) {
        let flagBits = input.byte()
        let properties = makeProperties(&input)
        let body = input.record()
        guard senders[side].active.count < Self.maxActive else { return }
        let flags = FrameFlags(type: .request, compressed: flagBits & 1 != 0, urgent: flagBits & 2 != 0,
                               noReply: flagBits & 4 != 0)
        // Numbered when its first frame goes out: requests start in number order (§4.4).
        var request = outgoing(.request, number: 0, flags: flags, properties: properties, body: body)
        request.dropsBody = flagBits & 8 != 0
        request.preview = Int(flagBits >> 4) * 64
        senders[side].active.append(request)
    }

    mutating func startReply(side: Int, input: inout FuzzInput) {
        let flagBits = input.byte()
        let choice = input.byte()
        let properties = makeProperties(&input)
        let body = input.record()
        let other = 1 - side
        guard !senders[other].awaitingReply.isEmpty, senders[side].active.count < Self.maxActive else { return }
        let number = senders[other].awaitingReply.remove(at: Int(choice) % senders[other].awaitingReply.count)
        let type: MessageType = flagBits & 4 != 0 ? .error : .response
        let flags = FrameFlags(type: type, compressed: flagBits & 1 != 0, urgent: flagBits & 2 != 0)
        var reply = outgoing(type, number: number, flags: flags, properties: properties, body: body)
        reply.dropsBody = flagBits & 8 != 0
        reply.preview = Int(flagBits >> 4) * 64
        senders[side].active.append(reply)
    }

    private func outgoing(_ type: MessageType, number: MessageNumber, flags: FrameFlags, properties: Properties,
                          body: [UInt8]) -> Outgoing {
        var message = BLIPMessage(type: type, number: number, flags: flags, properties: properties,
                                  body: ByteBuffer(fuzzBytes: body))
        message.flags = flags
        return Outgoing(type: type, number: number, flags: flags, properties: properties, body: body,
                        stream: message.encodedStream())
    }

    mutating func sendFrame(side: Int, input: inout FuzzInput) {
        let choice = Int(input.byte())
        let chunkSize = input.isAtEnd ? 4096 : 1 + Int(input.uint16()) % 2048
        guard !senders[side].active.isEmpty else { return }
        let index = choice % senders[side].active.count
        var message = senders[side].active[index]
        let length = min(chunkSize, message.stream.readableBytes - message.sent)
        let chunk = message.stream.getSlice(at: message.stream.readerIndex + message.sent, length: length)!
        let first = message.sent == 0
        if first && message.type == .request {
            message.number = senders[side].nextRequest
            senders[side].nextRequest += 1
        }
        message.sent += length
        let last = message.sent == message.stream.readableBytes
        var flags = message.flags
        flags.hasMoreComing = !last
        var frame = ByteBuffer()
        do {
            try senders[side].codec.encodeFrame(number: message.number, flags: flags, chunk: chunk, into: &frame)
        } catch {
            fuzzCheck(false, "encoding failed: \(error)")
        }
        if last {
            senders[side].active.remove(at: index)
            // A request finished after a raw frame may never have reached the decoder whole.
            if message.type == .request && !message.flags.isNoReply && !senders[side].tainted {
                senders[side].awaitingReply.append(message.number)
            }
        } else {
            senders[side].active[index] = message
        }
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        let decoded: DecodedFrame
        do {
            decoded = try decoder.receive(frame, from: direction)
        } catch {
            fuzzCheck(senders[side].tainted, "a valid frame was refused: \(error)")
            return
        }
        guard !senders[side].tainted else { return }
        fuzzCheck(decoded.number == message.number, "frame number")
        fuzzCheck(decoded.flags.type == message.type, "frame type")
        fuzzCheck(decoded.startsMessage == first, "startsMessage")
        guard case .data = decoded.outcome else {
            fuzzCheck(false, "a frame of a sent message was not taken as data: \(decoded.outcome)")
            return
        }
        if let head = decoded.head {
            fuzzCheck(!last && !message.sawHead, "a head came twice or with the last frame")
            fuzzCheck(head.properties == message.properties, "head properties differ")
            fuzzCheck(head.type == message.type && head.number == message.number, "head type or number")
            if !last { senders[side].active[index].sawHead = true }
            if message.dropsBody {
                fuzzCheck(decoder.stopKeepingBody(of: message.type, number: message.number, from: direction,
                                                  keepingFirst: message.preview),
                          "the decoder did not take a head's message as in progress")
                senders[side].active[index].bodyDropped = true
            }
        }
        guard last else {
            fuzzCheck(decoded.message == nil, "a message completed before its last frame")
            return
        }
        guard let received = decoded.message else {
            fuzzCheck(false, "the last frame completed no message")
            return
        }
        fuzzCheck(received.type == message.type && received.number == message.number, "message type or number")
        fuzzCheck(received.flags.rawValue == message.flags.rawValue, "flags \(received.flags) sent \(message.flags)")
        fuzzCheck(received.properties == message.properties, "properties differ")
        if message.bodyDropped {
            let kept = min(message.preview, message.body.count)
            fuzzCheck(Array(received.body.readableBytesView) == Array(message.body.prefix(kept))
                      && received.unkeptBodyBytes == message.body.count - kept, "an unkept body and its preview")
        } else {
            fuzzCheck(Array(received.body.readableBytesView) == message.body && received.keepsBody, "body differs")
        }
        fuzzCheck(received.streamBytes == message.stream.readableBytes, "stream size")
    }

    mutating func sendAck(side: Int, input: inout FuzzInput) {
        let kind = input.byte()
        let number = UInt64(input.uint16())
        let bytes = UInt64(input.uint32())
        let type: MessageType = kind & 1 == 0 ? .ackRequest : .ackResponse
        let frame = BLIPFrame.ack(type, number: number, bytes: bytes)
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        do {
            let decoded = try decoder.receive(frame, from: direction)
            guard case .ack(let ack) = decoded.outcome else {
                fuzzCheck(false, "an ACK was not taken as one")
                return
            }
            fuzzCheck(ack == AckInfo(type: type, number: number, bytes: bytes), "ACK changed")
        } catch {
            fuzzCheck(senders[side].tainted, "a valid ACK was refused: \(error)")
        }
    }

    mutating func sendRaw(side: Int, input: inout FuzzInput) {
        let bytes = input.record()
        senders[side].tainted = true
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        _ = try? decoder.receive(ByteBuffer(fuzzBytes: bytes), from: direction)
    }
}

/// Up to 3 properties with distinct keys; keys and values are input bytes with NUL replaced.
private func makeProperties(_ input: inout FuzzInput) -> Properties {
    let count = Int(input.byte() % 4)
    var pairs: [(String, String)] = []
    for _ in 0..<count {
        let key = text(input.take(Int(input.byte() % 16)))
        let value = text(input.take(Int(input.byte() % 64)))
        if !pairs.contains(where: { $0.0 == key }) { pairs.append((key, value)) }
    }
    return Properties(pairs)
}

private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
}
