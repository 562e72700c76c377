import BLIPCore
import FuzzSupport
import NIOCore

/// BLIP frames as a peer sends them, into ``ConnectionDecoder`` (both directions) or one
/// ``DirectionDecoder``: frame parsing, the running CRC, inflating, message assembly.
///
/// Input: a mode byte, then records `control || len16 || frame bytes`.
/// - mode bit 0: fix checksums. Each non-ACK frame's last 4 bytes are replaced by the CRC the
///   decoder will expect, computed by a shadow ``InboundCodec`` per direction fed the same frames
///   (it inflates like the decoder), so mutations get past the CRC into assembly and inflating.
/// - mode bit 1: one ``DirectionDecoder``; a record whose control has bit 1 set registers
///   `expectReply(to:)` for the number in its first byte(s) instead of carrying a frame.
/// - mode bit 2: small limits, to reach the limit paths with small inputs.
/// - mode bit 3: ``DirectionDecoder/exposesPayloads``.
/// - control bit 0: the direction (ConnectionDecoder mode).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let fixChecksums = mode & 1 != 0
    let singleDirection = mode & 2 != 0
    let limits = mode & 4 != 0 ? BLIPLimits.smallForFuzzing : .default
    let connection = ConnectionDecoder(limits: limits)
    let single = DirectionDecoder(limits: limits)
    let decoders = singleDirection ? [single, single] : [connection.decoder(for: .clientToServer),
                                                         connection.decoder(for: .serverToClient)]
    for decoder in decoders { decoder.exposesPayloads = mode & 8 != 0 }
    let shadows = [InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize),
                   InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize)]
    var shadowBroken = [false, false]

    while !input.isAtEnd {
        let control = input.byte()
        var bytes = input.record()
        let side = singleDirection ? 0 : Int(control & 1)
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        if singleDirection && control & 2 != 0 {
            var number: UInt64 = 0
            for byte in bytes.prefix(8) { number = number << 8 | UInt64(byte) }
            single.expectReply(to: number)
            continue
        }
        if fixChecksums && !shadowBroken[side] {
            shadowBroken[side] = !fixChecksum(&bytes, shadow: shadows[side])
        }
        let decoder = decoders[side]
        let failureBefore = decoder.failure
        let buffer = ByteBuffer(fuzzBytes: bytes)
        do {
            let decoded = singleDirection ? try single.receive(buffer) : try connection.receive(buffer, from: direction)
            fuzzCheck(failureBefore == nil, "a broken direction decoded a frame")
            check(decoded, decoder: decoder, limits: limits)
        } catch {
            if let failureBefore {
                fuzzCheck(error.code == failureBefore.code, "a broken direction changed its error")
            }
            fuzzCheck(decoder.failure?.code == error.code, "the failure is not kept")
            fuzzCheck(decoder.messagesInProgress == 0 && decoder.bytesInProgress == 0,
                      "a broken direction still holds partial messages")
        }
        fuzzCheck(decoder.messagesInProgress <= limits.maxMessagesInProgress, "too many messages in progress")
        fuzzCheck(decoder.bytesInProgress >= 0, "negative bytes in progress")
    }
    return 0
}

private func check(_ decoded: DecodedFrame, decoder: DirectionDecoder, limits: BLIPLimits) {
    if decoder.exposesPayloads, case .data = decoded.outcome {
        fuzzCheck(decoded.payload?.readableBytes == decoded.payloadBytes, "exposed payload and payloadBytes differ")
    }
    if let head = decoded.head {
        fuzzCheck(decoded.message == nil, "a frame gave both a head and a message")
        roundTrip(head.properties, limits: limits)
    }
    if let message = decoded.message {
        fuzzCheck(!message.flags.hasMoreComing, "a complete message keeps MoreComing")
        fuzzCheck(message.number == decoded.number, "message and frame numbers differ")
        fuzzCheck(message.streamBytes <= limits.maxMessageSize, "a message over the size limit was delivered")
        fuzzCheck(message.properties.encodedSize + message.body.readableBytes < message.streamBytes,
                  "properties and body exceed the message stream")
        roundTrip(message.properties, limits: limits)
        _ = message.properties.description
        _ = message.profile
    }
}

/// Decoded properties encode to a block that decodes to the same pairs.
private func roundTrip(_ properties: Properties, limits: BLIPLimits) {
    var encoded = ByteBuffer()
    properties.encode(into: &encoded)
    do {
        let again = try Properties.decode(from: &encoded, maxSize: limits.maxPropertiesSize)
        fuzzCheck(again == properties, "properties changed in a round trip")
        fuzzCheck(encoded.readableBytes == 0, "properties left bytes behind")
    } catch {
        fuzzCheck(false, "re-encoded properties do not decode: \(error)")
    }
}
