import BLIPCore
import NIOCore

extension SessionMediator {
    // MARK: releasing

    /// Lets a message go as far as its disposition allows: a request through the gate, a reply (or
    /// a paced request already out of the gate) at once.
    func release(_ message: MediatedMessage, lane: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        if message.isRequest && message.forwardedNumber == nil {
            try pumpGate(lane, into: &output)
        } else if message.forwardedNumber != nil {
            try flushHeld(message, lane: lane, into: &output)
        }
    }

    /// Numbers and sends the requests at the head of the gate until one must still wait.
    func pumpGate(_ lane: MediatedDirection, into output: inout MediatorOutput) throws(BLIPError) {
        let other = lanes[lane.direction.reversed.rawValue]
        while let first = lane.gate.first {
            switch first.disposition {
            case .forward, .replaced:
                try send(first)
            case .paced where first.dueFrames > 0:
                try send(first)  // its first frame is through the link
            case .swallow:
                lane.gate.removeFirst()
                retireIfDone(first, lane: lane)
            default:
                return
            }
        }

        /// Numbers the gate's first request and sends what of it may go.
        func send(_ first: MediatedMessage) throws(BLIPError) {
            lane.gate.removeFirst()
            let number = lane.numbers.assign(original: first.number, expectsReply: first.expectsReply,
                                             profile: first.head?.profile, replyRewrite: first.replyRewrite)
            first.forwardedNumber = number
            if first.expectsReply { other.decoder.expectReply(to: number) }
            try flushHeld(first, lane: lane, into: &output)
        }
    }

    /// Sends what `message` holds (or its replacement) now that it may go.
    func flushHeld(_ message: MediatedMessage, lane: MediatedDirection,
                           into output: inout MediatorOutput) throws(BLIPError) {
        guard let number = message.forwardedNumber else { return }
        if message.gatedBytes > 0 {
            lane.chargeGated(-message.gatedBytes)
            message.gatedBytes = 0
        }
        switch message.disposition {
        case .forward:
            if let whole = message.whole {
                message.whole = nil
                try lane.encodeMessage(number: number, type: message.type, flags: message.flags, properties: whole.properties,
                                       body: whole.body, into: &output)
            }
            let held = message.held
            message.held.removeAll()
            for frame in held {
                try lane.encodeFrame(number: number, flags: frame.flags, chunk: frame.chunk, wirePayload: nil, into: &output)
            }
        case .replaced(let replacement):
            message.held.removeAll()
            try lane.encodeMessage(number: number, type: replacement.type, flags: replacement.flags,
                                   properties: replacement.properties, body: replacement.body, into: &output)
        case .paced:
            // The frames through the link, in the order they came; the rest wait for their timers.
            let count = message.dueFrames
            let due = message.held.prefix(count)
            message.held.removeFirst(count)
            for frame in due {
                lane.chargeDelayed(-frame.chunk.readableBytes)
                try lane.encodeFrame(number: number, flags: frame.flags, chunk: frame.chunk, wirePayload: nil, into: &output)
            }
        default:
            return
        }
        retireIfDone(message, lane: lane)
    }

    /// Forgets a message once it is complete and nothing of it waits.
    func retireIfDone(_ message: MediatedMessage, lane: MediatedDirection) {
        guard message.isComplete, message.holdsNothing, !message.isDone else { return }
        switch message.disposition {
        case .forward, .replaced, .paced:
            guard message.forwardedNumber != nil else { return }
        case .swallow:
            if message.isRequest && lane.gate.contains(where: { $0 === message }) { return }
        default:
            return
        }
        message.isDone = true
        lane.messages[MessageKey(isRequest: message.isRequest, number: message.number)] = nil
        if !message.isRequest {
            lanes[lane.direction.reversed.rawValue].numbers.replied(forwarded: message.number)
        }
    }

    func armTimer(after delay: TimeAmount, for message: MediatedMessage, lane: MediatedDirection,
                  into output: inout MediatorOutput) -> UInt64 {
        nextToken += 1
        timers[nextToken] = (lane.direction, MessageKey(isRequest: message.isRequest, number: message.number))
        output.timers.append(MediationTimer(token: nextToken, delay: delay))
        return nextToken
    }
}
