import BLIPCore
import NIOCore

/// The pass-through fast path: a whole message in one frame, in a direction the relay has not
/// intervened in yet, that the policy lets pass at its head.
///
/// Such a message leaves as it came (``MediatedSend/Payload/original``) and needs no
/// ``MediatedMessage``: nothing of it is held, no later frame needs to find it, and no request
/// waits in the gate in front of it (a held request switches its direction to re-encoding, §4.3).
/// What a later intervention still needs is kept exactly as the general path keeps it:
/// - a request gets its forwarded number from the direction's ``MessageNumberMap`` (the identity
///   until a request is swallowed), recorded with its `Profile` when it expects a reply, and the
///   reverse decoder is told to expect that reply (§4.4); so a reply that arrives after the
///   relay started re-encoding either direction is still mapped and profiled;
/// - a reply is mapped back through the reverse direction's map and forgotten there.
extension SessionMediator {
    enum PassThrough {
        /// Forwarded unchanged; nothing else to do.
        case forwarded
        /// The policy decided something else: the general path carries it out.
        case decided(MediatedHead, HeadDecision)
        /// Not a candidate (split over frames, a reply to rewrite, …): the general path decides.
        case ineligible
    }

    /// Tries the fast path for `decoded`, a data frame of a message of `type` arriving on `lane`.
    func passThrough(_ decoded: inout DecodedFrame, type: MessageType, lane: MediatedDirection,
                     other: MediatedDirection, into output: inout MediatorOutput) -> PassThrough {
        guard decoded.startsMessage, !lane.isReencoding, lane.gate.isEmpty,
              let properties = decoded.message?.properties else { return .ineligible }
        var flags = decoded.flags
        flags.hasMoreComing = false
        if type == .request {
            let head = MediatedHead(direction: lane.direction, number: decoded.number, type: type, flags: flags,
                                    properties: properties)
            let decision = decide(head: head, into: &output)
            guard case .pass = decision.action else { return .decided(head, decision) }
            let expectsReply = !flags.isNoReply
            let number = lane.numbers.assign(original: decoded.number, expectsReply: expectsReply,
                                             profile: expectsReply ? head.profile : nil, replyRewrite: nil)
            if expectsReply { other.decoder.expectReply(to: number) }
        } else {
            let entry = other.numbers.entry(forwarded: decoded.number)
            if type == .response, entry?.replyRewrite != nil { return .ineligible }
            let original = entry?.original ?? decoded.number
            let head = MediatedHead(direction: lane.direction, number: original, type: type, flags: flags,
                                    properties: properties, requestProfile: entry?.profile)
            let decision = decide(head: head, into: &output)
            guard case .pass = decision.action else { return .decided(head, decision) }
            other.numbers.replied(forwarded: decoded.number)
            if original != decoded.number {
                // Observers pair replies with requests in the requester's numbering.
                decoded.number = original
                decoded.message?.number = original
                decoded.head?.number = original
            }
        }
        output.append(MediatedSend(direction: lane.direction, payload: .original))
        lane.forwardedChecksum = lane.decoder.checksum
        return .forwarded
    }
}
