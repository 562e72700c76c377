import BLIPCore
import NIOCore

extension SessionMediator {
    /// Asks the policy about a message once its properties are known; what it decided beside the
    /// message (reports, a close) goes into `output`.
    func decide(head: MediatedHead, into output: inout MediatorOutput) -> HeadDecision {
        let decision = policy.decide(head: head)
        output.take(decision.asides)
        return decision
    }

    /// Asks the policy about a complete message its head decision held for the body.
    func decide(body: BLIPMessage, head: MediatedHead, into output: inout MediatorOutput) -> BodyDecision {
        let decision = policy.decide(body: body, head: head)
        output.take(decision.asides)
        return decision
    }

    /// Carries out a head verdict.
    func apply(_ decision: HeadDecision, to message: MediatedMessage, lane: MediatedDirection,
               other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        switch decision.action {
        case .pass: try forward(message, lane: lane, into: &output)
        case .deny(let error): try refuse(message, with: error, ruling: decision.ruling, lane: lane, other: other, into: &output)
        case .drop: try refuse(message, with: nil, ruling: decision.ruling, lane: lane, other: other, into: &output)
        case .delay(let amount): hold(message, for: amount, ruling: decision.ruling, lane: lane, into: &output)
        case .pace(let rate): pace(message, bytesPerSecond: rate, ruling: decision.ruling, lane: lane, into: &output)
        case .awaitBody:
            lane.switchToReencoding()
            // What arrived before the head is in the decoder's assembly too (route(_:) holds no more).
            message.held.removeAll()
            message.disposition = .awaitingBody
        }
    }

    // MARK: what head and body verdicts share

    private func forward(_ message: MediatedMessage, lane: MediatedDirection,
                         into output: inout MediatorOutput) throws(BLIPError) {
        message.disposition = .forward
        try release(message, lane: lane, into: &output)
    }

    /// Swallows the message; its sender gets `error` as an ERR (nil: nobody answers; a NoReply
    /// request is never answered). A `rev` is not just swallowed, denied or dropped: its
    /// receiver, which asked for it, gets a ``NoRevNotice`` in its place (with the denial's
    /// status, or ``droppedRevision`` for a drop), since a receiver waiting for a revision that
    /// never comes never finishes its pull: BLIP runs over one TCP stream and loses nothing, so
    /// a drop that left no trace would simulate a failure no real peer can see.
    private func refuse(_ message: MediatedMessage, with error: ErrorReply?, ruling: Ruling, lane: MediatedDirection,
                        other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        message.withheld = message.isRequest
        if let head = message.head, let notice = NoRevNotice.replacing(head, refusal: error ?? Self.droppedRevision) {
            let answered = error != nil && !message.flags.isNoReply
            let action = (error.map { "deny \($0.code)" } ?? "drop") + (answered ? " + norev" : " (no ERR) + norev")
            report(message, lane: lane, ruling: ruling, action: action, kind: error == nil ? .drop : .deny, into: &output)
            lane.switchToReencoding()
            other.switchToReencoding()
            if message.held.contains(where: { $0.flags.isCompressed }) { lane.breakDeflateStream() }
            message.held.removeAll()
            message.answerWhenComplete = answered ? error.map { .error($0) } : nil
            message.disposition = .replaced(notice)
            try release(message, lane: lane, into: &output)
            if message.isComplete { try sendAnswerWhenComplete(message, lane: lane, other: other, into: &output) }
            return
        }
        report(message, lane: lane, ruling: ruling, action: error.map { "deny \($0.code)" } ?? "drop",
               kind: error == nil ? .drop : .deny, into: &output)
        try swallow(message, answer: error.map { .error($0) }, lane: lane, other: other, into: &output)
    }

    /// The status a dropped `rev`'s ``NoRevNotice`` carries: the revision was not delivered.
    static let droppedRevision = ErrorReply(domain: "HTTP", code: 503, message: "revision dropped by blipscope policy")

    /// Sends the ERR owed to the sender of a request the relay replaced (a denied `rev`).
    private func sendAnswerWhenComplete(_ message: MediatedMessage, lane: MediatedDirection, other: MediatedDirection,
                                        into output: inout MediatorOutput) throws(BLIPError) {
        guard let answer = message.answerWhenComplete else { return }
        message.answerWhenComplete = nil
        try send(answer, for: message, lane: lane, other: other, into: &output)
    }

    /// Holds the message for `amount` (the direction is re-encoded from now on, if not yet).
    private func hold(_ message: MediatedMessage, for amount: TimeAmount, ruling: Ruling, lane: MediatedDirection,
                      into output: inout MediatorOutput) {
        report(message, lane: lane, ruling: ruling, action: "delay \(Self.describe(amount))", kind: .delay,
               delay: amount, into: &output)
        lane.switchToReencoding()
        message.disposition = .delayed(armTimer(after: amount, for: message, lane: lane, into: &output))
        lane.chargeDelayed(message.heldBytes)  // later frames are charged as they are held
    }

    /// Paces the message on a link of `rate` bytes per second (the direction is re-encoded from
    /// now on, if not yet): the frames that came before its properties were complete take the
    /// link first, each later one as it arrives (``paceFrame(of:bytes:bytesPerSecond:lane:into:)``).
    private func pace(_ message: MediatedMessage, bytesPerSecond rate: Int, ruling: Ruling, lane: MediatedDirection,
                      into output: inout MediatorOutput) {
        lane.switchToReencoding()
        message.disposition = .paced(bytesPerSecond: rate)
        message.paceRuling = ruling
        for frame in message.held {
            paceFrame(of: message, bytes: frame.chunk.readableBytes, bytesPerSecond: rate, lane: lane, into: &output)
        }
    }

    /// One frame of a paced message, `bytes` long, is held: it leaves once the transfer time the
    /// policy gives it is over and the frames before it have left. Charged as held for a timer
    /// until then. The message's first frame reports the pacing.
    func paceFrame(of message: MediatedMessage, bytes: Int, bytesPerSecond rate: Int, lane: MediatedDirection,
                   into output: inout MediatorOutput) {
        let hold = policy.transferTime(of: bytes, travelling: lane.direction, bytesPerSecond: rate)
        // The message's timer is armed while frames wait for the link: for the first of them.
        if message.paceDue.isEmpty { _ = armTimer(after: hold, for: message, lane: lane, into: &output) }
        message.paceDue.append(now + hold)
        lane.chargeDelayed(bytes)
        if let ruling = message.paceRuling {
            message.paceRuling = nil
            report(message, lane: lane, ruling: ruling, action: "pace \(rate) B/s, first frame \(Self.describe(hold))",
                   kind: .delay, delay: hold, into: &output)
        }
    }

    /// A paced message's timer fired: the frames through the link by now (within
    /// ``paceTolerance``) go, once the frames before them have; the timer is armed again for the
    /// next frame due.
    func paceTimerFired(for message: MediatedMessage, lane: MediatedDirection,
                        into output: inout MediatorOutput) throws(BLIPError) {
        while let due = message.paceDue.first, due <= now + Self.paceTolerance {
            message.paceDue.removeFirst()  // through the link: one more due frame
        }
        try release(message, lane: lane, into: &output)
        if let next = message.paceDue.first {
            _ = armTimer(after: max(next - now, .zero), for: message, lane: lane, into: &output)
        }
    }

    /// Carries out a body verdict on a complete message.
    func apply(_ decision: BodyDecision, to message: MediatedMessage, complete: BLIPMessage, lane: MediatedDirection,
               other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        switch decision.action {
        case .pass:
            message.whole = complete
            try forward(message, lane: lane, into: &output)
            if message.whole != nil, message.isRequest {
                // Passed, but behind a held request in the gate (§4.3): it waits there, counted.
                message.gatedBytes += message.heldBytes
                lane.chargeGated(message.heldBytes)
            }
        case .deny(let error): try refuse(message, with: error, ruling: decision.ruling, lane: lane, other: other, into: &output)
        case .drop: try refuse(message, with: nil, ruling: decision.ruling, lane: lane, other: other, into: &output)
        case .answer(let properties, let body) where message.isRequest:
            report(message, lane: lane, ruling: decision.ruling, action: "answer", kind: .modify, into: &output)
            try swallow(message, answer: .answer(properties, body), lane: lane, other: other, into: &output)
        case .answer(let properties, let body):
            try replace(message, with: BLIPMessage(type: message.type, flags: message.flags, properties: properties,
                                                   body: body), rewrite: nil, lane: lane, ruling: decision.ruling,
                        into: &output)
        case .replace(let properties, let body, let compressed, let rewrite):
            var flags = message.flags
            flags.isCompressed = compressed
            try replace(message, with: BLIPMessage(type: message.type, flags: flags, properties: properties, body: body),
                        rewrite: rewrite, lane: lane, ruling: decision.ruling, into: &output)
        case .delay(let amount):
            message.whole = complete
            hold(message, for: amount, ruling: decision.ruling, lane: lane, into: &output)
        }
    }

    /// The message's last frame has arrived.
    func finish(_ message: MediatedMessage, _ complete: BLIPMessage, lane: MediatedDirection,
                other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        try sendAnswerWhenComplete(message, lane: lane, other: other, into: &output)
        switch message.disposition {
        case .swallow(let answer):
            if let answer { try send(answer, for: message, lane: lane, other: other, into: &output) }
        case .awaitingBody:
            let head = message.head!
            try apply(decide(body: complete, head: head, into: &output), to: message, complete: complete, lane: lane,
                      other: other, into: &output)
        case .rewriteReply(let rewrite):
            try rewriteReply(message, complete, rewrite: rewrite, lane: lane, into: &output)
        default:
            break
        }
        retireIfDone(message, lane: lane)
    }

    private func replace(_ message: MediatedMessage, with replacement: BLIPMessage, rewrite: ReplyRewrite?,
                         lane: MediatedDirection, ruling: Ruling, into output: inout MediatorOutput) throws(BLIPError) {
        report(message, lane: lane, ruling: ruling, action: rewrite.map { "replace (\($0.name))" } ?? "replace", kind: .modify,
               into: &output)
        if message.flags.isCompressed { lane.breakDeflateStream() }
        message.held.removeAll()
        message.replyRewrite = rewrite
        message.disposition = .replaced(replacement)
        try release(message, lane: lane, into: &output)
    }

    /// Stops a message from reaching its receiver; renumbering then starts in its direction.
    private func swallow(_ message: MediatedMessage, answer: RelayReply?, lane: MediatedDirection,
                         other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        lane.switchToReencoding()
        if message.isRequest { other.switchToReencoding() }
        if message.held.contains(where: { $0.flags.isCompressed }) { lane.breakDeflateStream() }
        message.held.removeAll()
        let answer = message.isRequest && message.flags.isNoReply ? nil : answer
        message.disposition = .swallow(answer)
        try release(message, lane: lane, into: &output)
        if message.isComplete, let answer { try send(answer, for: message, lane: lane, other: other, into: &output) }
    }

    /// Sends the relay's own reply for a swallowed message: to a request, back to its sender; in
    /// place of a reply, on to the requester. Uncompressed (§3.2); copies the Urgent bit (§2.1).
    private func send(_ answer: RelayReply, for message: MediatedMessage, lane: MediatedDirection,
                      other: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        let target = message.isRequest ? other : lane
        let number = message.isRequest ? message.number : (message.forwardedNumber ?? message.number)
        let type: MessageType
        let properties: Properties
        var body = ByteBuffer()
        switch answer {
        case .error(let error):
            type = .error
            properties = Properties([.errorDomain: error.domain, .errorCode: String(error.code)])
            body.writeString(error.message)
        case .answer(let props, let answerBody):
            type = .response
            properties = props
            body = answerBody
        }
        let flags = FrameFlags(type: type, urgent: message.flags.isUrgent)
        let frames = try target.encodeMessage(number: number, type: type, flags: flags, properties: properties, body: body,
                                              into: &output)
        // Observers read the answer as it was sent, typed: nothing is parsed back from the frames.
        var sent = BLIPMessage(type: type, number: number, flags: flags, properties: properties, body: body)
        sent.frameCount = frames
        sent.wirePayloadBytes = Varint.encodedLength(UInt64(properties.encodedSize)) + properties.encodedSize + body.readableBytes
        output.answers.append(RelayAnswer(direction: target.direction, message: sent))
    }

    private func rewriteReply(_ message: MediatedMessage, _ complete: BLIPMessage, rewrite: ReplyRewrite,
                              lane: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        var replacement = complete
        if complete.type == .response {
            do {
                replacement.body = try rewrite.rewriteBody(complete.body)
            } catch {
                replacement = BLIPMessage.error(to: message.number, domain: "HTTP", code: 502,
                                                message: "blipscope could not map the reply back (\(rewrite.name))",
                                                urgent: message.flags.isUrgent)
            }
        }
        message.held.removeAll()
        message.disposition = .replaced(replacement)
        try release(message, lane: lane, into: &output)
    }

    /// Reports an intervention; `kind` is what it was by its effect, unless the ruling names it.
    private func report(_ message: MediatedMessage, lane: MediatedDirection, ruling: Ruling, action: String,
                        kind: VerdictKind, delay: TimeAmount? = nil, into output: inout MediatorOutput) {
        output.reports.append(MediationReport(direction: lane.direction,
                                              number: message.isRequest ? message.number
                                                  : (message.forwardedNumber ?? message.number),
                                              type: message.type, profile: message.head?.profile, rule: ruling.rule,
                                              action: action, kind: ruling.kind ?? kind, delay: delay,
                                              rateLimited: ruling.rateLimited))
    }

    static func describe(_ amount: TimeAmount) -> String {
        let ms = amount.nanoseconds / 1_000_000
        return ms >= 1000 && ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }
}
