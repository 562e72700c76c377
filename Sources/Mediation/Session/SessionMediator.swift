import BLIPCore
import NIOCore

/// The relay's mediating mode for one session, both directions, as a pure state machine
/// (ARCHITECTURE.md "The one protocol fact that shapes the relay"). Every frame is decoded here,
/// once; the ``MediationPolicy`` decides per message; the output says what to send.
///
/// - Until its first intervention a direction is forwarded byte for byte (``MediatedSend/Payload/original``).
///   A message that arrives whole in one frame and passes at its head takes the fast path of
///   `SessionMediator+PassThrough.swift`: only its number (and, for a request awaiting a reply,
///   its profile) is remembered, which is all a later intervention needs.
/// - After it, the direction is re-encoded for the rest of the session (see ``MediatedDirection``):
///   requests are renumbered so a swallowed one leaves no gap and replies are mapped back (§4.4);
///   replies the relay sends itself are uncompressed, so the receiver's inflater is untouched (§3.2).
/// - A held request holds every later request of its direction; replies and ACKs keep flowing (§4.3).
/// - ACKs (§5): once a direction is re-encoded, the relay ACKs its sender itself, at the receiver's
///   rule (every ≥ 50,000 bytes, counting payload and checksum as received), and swallows the ACKs
///   the receiver sends for it, whose counts no longer match what the sender sent. Senders therefore
///   never stall on a message the relay holds or swallows.
/// - An ERR for a denied request leaves only after the request's last frame arrived (LiteCore
///   registers the reply then, §4.4); a denied NoReply request vanishes.
///
/// - Memory: per direction, what it holds for a timer (delayed messages, the frames of paced
///   messages their link has not carried yet, withheld ACK frames) is
///   counted in ``delayedBytes(_:)``; above ``MediationLimits/maxDelayedBytes``
///   ``isOverDelayBudget(_:)`` tells the shell to stop reading that direction's sender until
///   timers release enough (back-pressure, as an unwritable receiver causes). A message awaiting
///   its own later frames (a body rule) is not counted and does not stop reading, which it needs
///   to complete: it is bounded by the decoder's message-size limit, and held once, in the
///   decoder's assembly, which is what leaves if the rule lets it (``MediatedMessage/whole``).
///   Requests that passed but wait in the gate behind a delayed request count too (a body
///   rule's as soon as it lets them), as long as the gate's first request waits for its timer
///   (``MediatedDirection/budgetedBytes``). The decoders assemble each
///   message whole (``bytesInProgress``) unless told otherwise: a message whose body the
///   mediator takes frame by frame is reported in ``MediatorOutput/unreadBody``, and the shell,
///   if nothing of its own reads it, says so with ``stopKeepingBody(_:keepingFirst:)``.
///
/// Not thread-safe: one per session, driven from the session's event loop.
public final class SessionMediator {
    let policy: any MediationPolicy
    let lanes: [MediatedDirection]
    var timers: [UInt64: (direction: BLIPDirection, key: MessageKey)] = [:]
    /// ACK frames held by ``MediationPolicy/holdAck(_:travelling:)``, by timer token, with the
    /// direction whose reading brought them (charged with their bytes).
    var heldAcks: [UInt64: (send: MediatedSend, chargedTo: BLIPDirection, bytes: Int)] = [:]
    var nextToken: UInt64 = 0
    let allocator = ByteBufferAllocator()
    /// The time of the event being handled (``receive(_:travelling:now:)``, ``timerFired(_:now:)``).
    var now: NIODeadline = .uptimeNanoseconds(0)

    /// A paced frame due within this much after a timer leaves with it: one wake-up and one write
    /// for what a fast link carries in that time, instead of one per frame.
    static let paceTolerance = TimeAmount.milliseconds(1)

    public init(policy: any MediationPolicy, limits: MediationLimits = .default) {
        self.policy = policy
        lanes = [MediatedDirection(direction: .clientToServer, limits: limits),
                 MediatedDirection(direction: .serverToClient, limits: limits)]
    }

    /// Bytes of partly received messages the decoders hold, both directions.
    public var bytesInProgress: Int { lanes.reduce(0) { $0 + $1.decoder.bytesInProgress } }

    /// Requests whose replies the decoders gave up waiting for (``BLIPLimits/maxAwaitedReplies``).
    public var forgottenReplies: Int { lanes.reduce(0) { $0 + $1.decoder.forgottenReplies } }

    /// Forwarded requests whose replies the relay still maps back, both directions (at most
    /// ``BLIPLimits/maxAwaitedReplies`` each).
    public var awaitedReplies: Int { lanes.reduce(0) { $0 + $1.numbers.awaitingCount } }

    /// True once the relay re-encodes `direction` (after its first intervention).
    public func isReencoding(_ direction: BLIPDirection) -> Bool { lanes[direction.rawValue].isReencoding }

    /// Bytes received travelling `direction` that wait for a timer: messages held by a delay
    /// (uncompressed chunks as held) and ACK frames withheld because of what was read from
    /// `direction`'s sender. Messages awaiting their own later frames are not counted.
    public func delayedBytes(_ direction: BLIPDirection) -> Int { lanes[direction.rawValue].delayedBytes }

    /// Bytes of requests that passed but wait behind a held request travelling `direction`.
    public func gatedBytes(_ direction: BLIPDirection) -> Int { lanes[direction.rawValue].gatedBytes }

    /// The most ``delayedBytes(_:)`` plus ``gatedBytes(_:)`` has been in `direction` during the session.
    public func peakDelayedBytes(_ direction: BLIPDirection) -> Int { lanes[direction.rawValue].peakDelayedBytes }

    /// True while ``delayedBytes(_:)`` (plus ``gatedBytes(_:)`` when the gate waits for a timer)
    /// is above ``MediationLimits/maxDelayedBytes``: the shell must not read more from
    /// `direction`'s sender until a timer brings it back under.
    public func isOverDelayBudget(_ direction: BLIPDirection) -> Bool {
        let lane = lanes[direction.rawValue]
        return lane.budgetedBytes > lane.limits.maxDelayedBytes
    }

    /// Takes one received BLIP frame (one WebSocket binary message, unmasked) travelling in
    /// `direction`. Throws the decoder's fatal errors (the session must close) and the relay's
    /// own deflate failures.
    public func receive(_ bytes: ByteBuffer, travelling direction: BLIPDirection,
                        now: NIODeadline = .now()) throws(BLIPError) -> MediatorOutput {
        let lane = lanes[direction.rawValue]
        let other = lanes[direction.reversed.rawValue]
        self.now = now
        var output = MediatorOutput()
        var decoded = try lane.decoder.receive(bytes)
        switch decoded.outcome {
        case .ack(let ack):
            // An ACK counts bytes of a message travelling the other way: valid only while that
            // direction is forwarded unchanged.
            if !other.isReencoding { sendAck(ack, travelling: direction, original: bytes, into: &output) }
        case .ignored:
            if !lane.isReencoding {
                output.append(MediatedSend(direction: direction, payload: .original))
                lane.forwardedChecksum = lane.decoder.checksum
            }
        case .data:
            try receiveData(&decoded, lane: lane, other: other, into: &output)
        }
        decoded.payload = nil
        decoded.wirePayload = nil
        output.decoded = decoded
        return output
    }

    /// Nothing reads more than the first `prefix` bytes of `body`'s body (``MediatorOutput/unreadBody``):
    /// its decoder stops keeping the rest (``DirectionDecoder/stopKeepingBody(of:number:keepingFirst:)``).
    /// Each later frame is still inflated, checksummed and forwarded, held or swallowed as before;
    /// the finished message in ``MediatorOutput/decoded`` carries the prefix, and the rest's
    /// length in ``BLIPMessage/unkeptBodyBytes``. Returns false when the message is no longer in
    /// progress.
    @discardableResult
    public func stopKeepingBody(_ body: UnreadBody, keepingFirst prefix: Int = 0) -> Bool {
        lanes[body.direction.rawValue].decoder.stopKeepingBody(of: body.type, number: body.number, keepingFirst: prefix)
    }

    /// A timer from ``MediatorOutput/timers`` fired: the delayed message goes on.
    public func timerFired(_ token: UInt64, now: NIODeadline = .now()) throws(BLIPError) -> MediatorOutput {
        self.now = now
        var output = MediatorOutput()
        if let ack = heldAcks.removeValue(forKey: token) {
            lanes[ack.chargedTo.rawValue].chargeDelayed(-ack.bytes)
            output.append(ack.send)
            return output
        }
        guard let (direction, key) = timers.removeValue(forKey: token),
              let message = lanes[direction.rawValue].messages[key] else { return output }
        let lane = lanes[direction.rawValue]
        if case .paced = message.disposition {
            try paceTimerFired(for: message, lane: lane, into: &output)
            return output
        }
        // No longer waiting for a timer, whether or not the gate lets it leave now.
        if case .delayed = message.disposition {
            lane.chargeDelayed(-message.heldBytes)
            if message.isRequest {
                // Until it leaves the gate (at once, unless a request ahead of it is still held).
                message.gatedBytes += message.heldBytes
                lane.chargeGated(message.heldBytes)
            }
        }
        message.disposition = .forward
        try release(message, lane: lane, into: &output)
        return output
    }

    /// Sends an ACK (the received one, or one of the relay's own when `original` is nil), or holds
    /// it when the policy withholds ACKs.
    func sendAck(_ ack: AckInfo, travelling direction: BLIPDirection, original: ByteBuffer?,
                         into output: inout MediatorOutput) {
        guard let delay = policy.holdAck(ack, travelling: direction) else {
            output.append(MediatedSend(direction: direction, payload: original == nil
                ? .bytes(BLIPFrame.ack(ack.type, number: ack.number, bytes: ack.bytes, allocator: allocator)) : .original))
            return
        }
        nextToken += 1
        let frame = BLIPFrame.ack(ack.type, number: ack.number, bytes: ack.bytes, allocator: allocator)
        // A received ACK came from `direction`'s sender; the relay's own ACKs answer the other one.
        let chargedTo = original == nil ? direction.reversed : direction
        heldAcks[nextToken] = (MediatedSend(direction: direction, payload: .bytes(frame)), chargedTo, frame.readableBytes)
        lanes[chargedTo.rawValue].chargeDelayed(frame.readableBytes)
        output.timers.append(MediationTimer(token: nextToken, delay: delay))
        output.reports.append(MediationReport(direction: direction, number: ack.number, type: ack.type, profile: nil,
                                              rule: nil, action: "hold-ack \(Self.describe(delay))", kind: .fault))
    }

    // MARK: frames

    func receiveData(_ decoded: inout DecodedFrame, lane: MediatedDirection, other: MediatedDirection,
                             into output: inout MediatorOutput) throws(BLIPError) {
        let type = decoded.flags.type!
        var decided: (head: MediatedHead, decision: HeadDecision)?
        switch passThrough(&decoded, type: type, lane: lane, other: other, into: &output) {
        case .forwarded: return
        case .decided(let head, let decision): decided = (head, decision)
        case .ineligible: break
        }
        let key = MessageKey(isRequest: type == .request, number: decoded.number)
        let message: MediatedMessage
        if decoded.startsMessage {
            message = start(type: type, decoded: decoded, lane: lane, other: other)
        } else if let existing = lane.messages[key] {
            message = existing
        } else {
            preconditionFailure("the decoder accepted a frame of a message the mediator does not know")
        }
        let properties = decoded.head?.properties ?? decoded.message?.properties
        if let decided {
            // The fast path asked the policy already (same head): carry out its answer.
            message.head = decided.head
            try apply(decided.decision, to: message, lane: lane, other: other, into: &output)
        } else if message.head == nil, let properties {
            let profile = type == .request ? nil : other.numbers.entry(forwarded: message.number)?.profile
            let head = MediatedHead(direction: lane.direction, number: message.forwardedNumber ?? message.number,
                                    type: type, flags: message.flags, properties: properties, requestProfile: profile)
            message.head = head
            if case .undecided = message.disposition {
                try apply(decide(head: head, into: &output), to: message, lane: lane, other: other, into: &output)
            }
        }
        let ack = decoded.ackToSend
        try route(message, flags: decoded.flags, chunk: decoded.payload!, wirePayload: decoded.wirePayload!,
                  lane: lane, into: &output)
        if decoded.head != nil, !message.readsWholeBody {
            output.unreadBody = UnreadBody(direction: lane.direction, type: type, number: message.number)
        }
        if let complete = decoded.message {
            message.isComplete = true
            output.completedWithheld = message.isRequest && message.withheld
            try finish(message, complete, lane: lane, other: other, into: &output)
            // A reply the relay rewrote (a filtered changes list's, mapped back) is observed as its
            // requester got it: it answers the request as that side sent it.
            if !message.isRequest, case .replaced(let replacement) = message.disposition { decoded.message = replacement }
        }
        if !message.isDone, decoded.startsMessage {
            // Kept until done; a message forwarded whole in one frame is never stored.
            lane.messages[key] = message
        }
        if lane.isReencoding, let ack { sendAck(ack, travelling: other.direction, original: nil, into: &output) }
        if !message.isRequest, let number = message.forwardedNumber {
            // Observers pair replies with requests in the requester's numbering.
            decoded.number = number
            decoded.message?.number = number
            decoded.head?.number = number
        }
    }

    func start(type: MessageType, decoded: DecodedFrame, lane: MediatedDirection,
                       other: MediatedDirection) -> MediatedMessage {
        let message = MediatedMessage(type: type, number: decoded.number, flags: decoded.flags)
        if type == .request {
            lane.gate.append(message)
        } else {
            // The reply answers a request forwarded the other way; map its number back.
            let entry = other.numbers.entry(forwarded: decoded.number)
            message.forwardedNumber = entry?.original ?? decoded.number
            if type == .response, let rewrite = entry?.replyRewrite { message.disposition = .rewriteReply(rewrite) }
        }
        return message
    }

    /// Sends, holds or drops one frame of `message`.
    func route(_ message: MediatedMessage, flags: FrameFlags, chunk: ByteBuffer, wirePayload: ByteBuffer,
                       lane: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        switch message.disposition {
        case .forward where message.forwardedNumber != nil && message.holdsNothing:
            if lane.isReencoding {
                try lane.encodeFrame(number: message.forwardedNumber!, flags: flags, chunk: chunk,
                                     wirePayload: wirePayload, into: &output)
            } else {
                output.append(MediatedSend(direction: lane.direction, payload: .original))
                lane.forwardedChecksum = lane.decoder.checksum
            }
        case .swallow, .replaced:
            lane.switchToReencoding()
            if flags.isCompressed { lane.breakDeflateStream() }
        case .awaitingBody:
            // Not copied: the decoder assembles the message for the body rule, and if the rule
            // lets it go, it leaves framed anew from that (``MediatedMessage/whole``).
            lane.switchToReencoding()
            if flags.isCompressed { lane.breakDeflateStream() }
        default:
            lane.switchToReencoding()
            if flags.isCompressed { lane.breakDeflateStream() }
            var copy = allocator.buffer(capacity: chunk.readableBytes)
            copy.writeImmutableBuffer(chunk)
            message.held.append((flags, copy))
            switch message.disposition {
            case .delayed: lane.chargeDelayed(copy.readableBytes)
            case .paced(let rate): paceFrame(of: message, bytes: copy.readableBytes, bytesPerSecond: rate, lane: lane, into: &output)
            case .forward where message.isRequest:
                // Passed, but behind a held request in the gate.
                message.gatedBytes += copy.readableBytes
                lane.chargeGated(copy.readableBytes)
            default: break
            }
        }
    }
}
