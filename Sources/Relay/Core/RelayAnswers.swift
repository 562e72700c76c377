import BLIPCore
import Mediation
import NIOCore

/// The replies a mediating relay sent on its own in one ``MediatorOutput``: the ERR a policy
/// answers a denied request with, or its answer in the peer's place.
///
/// The mediator sends such a reply only to a request it swallowed (or replaced), back toward the
/// request's sender, in the output where the request's last frame arrived; so a reply that goes
/// back the way the received frame came tells that the request completing in that frame never
/// reached its receiver. The replies are numbered as the sender numbered its request and sent
/// uncompressed (wire-format reference §3.2, §4.4), so they are read here from the frames the
/// mediator built, without an inflater; their checksums continue the receiver's stream and are
/// not checked (the relay made them). ACKs the relay sends back are not replies and are skipped.
enum RelayAnswers {
    /// The relay's own replies in `output`, whose received frame travelled `direction`, in order.
    static func read(_ output: MediatorOutput, received direction: BLIPDirection,
                     limits: BLIPLimits = .default) -> [BLIPMessage] {
        var answers: [BLIPMessage] = []
        var partial: [MessageNumber: (flags: FrameFlags, stream: ByteBuffer, frames: Int)] = [:]
        output.forEachSend { send in
            guard send.direction == direction.reversed, case .bytes(let bytes) = send.payload,
                  let frame = try? BLIPFrame.parse(bytes), let type = frame.flags.type, type.isReply,
                  !frame.flags.isCompressed else { return }
            var part = partial.removeValue(forKey: frame.number) ?? (frame.flags, ByteBuffer(), 0)
            var payload = frame.payload
            part.stream.writeBuffer(&payload)
            part.frames += 1
            guard !frame.flags.hasMoreComing else {
                partial[frame.number] = part
                return
            }
            var stream = part.stream
            guard let properties = try? Properties.decode(from: &stream, maxSize: limits.maxPropertiesSize) else { return }
            var flags = part.flags
            flags.hasMoreComing = false
            var message = BLIPMessage(type: type, number: frame.number, flags: flags, properties: properties, body: stream)
            message.frameCount = part.frames
            message.wirePayloadBytes = part.stream.readableBytes
            answers.append(message)
        }
        return answers
    }
}
