import BLIPCore
import Capture
import Mediation
import NIOCore
import WebSocketWire

/// The mediating forwarder: each complete WebSocket message is decoded by the ``SessionMediator``
/// before anything is forwarded; its output is written (unchanged frames as received, built
/// frames as new binary messages masked toward the upstream), its timers become
/// ``SessionAction/schedule(_:_:)``, its decode feeds the inspector (with the replies the relay
/// sent on its own, ``MediatorOutput/answers``, typed as the mediator encoded them) and its
/// interventions (``MediatorOutput/reports``, the policy's among them) become
/// ``RelayEvent/verdict(_:)`` events: one route. A close the policy asks for
/// (``MediatorOutput/closeRequest``) is carried out once the output is written. While the mediator holds more than
/// ``MediationLimits/maxDelayedBytes`` for timers in a direction, that direction's sender is not
/// read; the timer that brings it back under resumes the read.
///
/// A message whose body neither the mediator (``MediatorOutput/unreadBody``) nor the inspector
/// (``SessionInspector/readsBody(of:direction:)``) reads is not held past the observers' preview,
/// as in a pass-through session: a mediated attachment costs one frame's buffer.
///
/// A decode failure closes the session (the relay cannot forward what it cannot re-encode).
extension SessionCore {
    func mediate(_ frame: WebSocketFrameScanner.Frame, on side: SessionSide, into actions: inout [SessionAction]) {
        guard let mediator else { return }
        let direction = side.inbound
        let scanner = scanners[side.rawValue]
        let header = frame.header
        let whole = header.fin && header.opcode != WebSocketFrameHeader.continuation
        let (message, tooLarge) = assemblers[direction.rawValue].add(header, payload: scanner.payload(of: frame))
        if tooLarge {
            statistics.decodeErrors[direction.rawValue] += 1
            fail(RelayError(.decodeFailed(BLIPError(.frameTooLarge, "WebSocket message over the reassembly limit"), direction)),
                 into: &actions)
            return
        }
        guard let bytes = message else { return }  // a fragment: wait for the rest
        let output: MediatorOutput
        do {
            output = try mediator.receive(bytes, travelling: direction, now: now.uptime)
        } catch {
            statistics.decodeErrors[direction.rawValue] += 1
            fail(RelayError(.decodeFailed(error, direction)), into: &actions)
            return
        }
        if let unread = output.unreadBody, let head = output.decoded?.head, !inspector.readsBody(of: head, direction: direction) {
            // Nor does anything here read it: past the preview, it is inflated and checked, not held.
            mediator.stopKeepingBody(unread, keepingFirst: inspector.bodyPrefix)
        }
        guard chargeInProgress(mediator.bytesInProgress) else {
            statistics.decodeErrors[direction.rawValue] += 1
            let limit = budget?.limit ?? 0
            fail(RelayError(.decodeFailed(BLIPError(.tooMuchInProgress,
                                                    "the relay's sessions hold more than \(limit) bytes of partly received messages"),
                                          direction)), into: &actions)
            return
        }
        let raw = whole ? scanner.bytes(from: frame.start, to: frame.end) : nil
        let built = carryOut(output, original: raw, originalBytes: bytes, from: side, into: &actions)
        if let decoded = output.decoded {
            // Forwarded as it came, the frame crossed both legs; otherwise only its sender's.
            var passed = false
            output.forEachSend { send in
                if case .original = send.payload, send.direction == direction { passed = true }
            }
            // The relay's own replies going back (a policy's ERR) are what the sender got instead
            // of the receiver's; the request they answer never reached the receiver.
            var answers: [BLIPMessage] = []
            if inspector.isAnalyzing {
                for answer in output.answers where answer.direction == direction.reversed { answers.append(answer.message) }
            }
            inspector.inspect(decoded: decoded, bytes: bytes, direction: direction, statistics: &statistics,
                              leg: passed ? .both : Self.leg(receivedTravelling: direction), withheld: output.completedWithheld,
                              relayAnswers: answers, at: now)
        }
        recordBuilt(built)
        carryOutRequestedClose(output.closeRequest, into: &actions)
    }

    /// Moves this session's charge on the relay-wide budget to `held`; false when that takes the
    /// relay past its bound (the session then ends, giving its charge back).
    func chargeInProgress(_ held: Int) -> Bool {
        guard let budget else { return true }
        let delta = held - charged
        charged = held
        return budget.charge(delta)
    }

    /// The leg a frame travelling `direction` arrives on.
    static func leg(receivedTravelling direction: BLIPDirection) -> CaptureLeg {
        direction == .clientToServer ? .client : .upstream
    }

    func mediationTimerFired(_ token: UInt64, into actions: inout [SessionAction]) {
        guard let mediator, !isFinished else { return }
        do {
            let output = try mediator.timerFired(token, now: now.uptime)
            recordBuilt(carryOut(output, original: nil, originalBytes: nil, from: nil, into: &actions))
            for side in SessionSide.allCases where attached[side.rawValue] { actions.append(.flush(side)) }
            // Back under the delay budget: a side held for it reads again.
            resumeReads(into: &actions)
            carryOutRequestedClose(output.closeRequest, into: &actions)
        } catch {
            fail(RelayError(.decodeFailed(error, .clientToServer)), into: &actions)
        }
    }

    /// A policy `close` asked for while a message was mediated: after that message is written.
    func carryOutRequestedClose(_ close: SessionCloseRequest?, into actions: inout [SessionAction]) {
        guard let close else { return }
        fail(RelayError(.policyClose(code: close.code, reason: close.reason)), into: &actions)
    }

    /// Frames the relay built (re-encoded, its own ERRs and ACKs) for capture, each on the leg it
    /// was sent on: the receiver's.
    private func recordBuilt(_ built: [(BLIPDirection, ByteBuffer)]) {
        guard observers.wants(.frameBytes) else { return }
        for (direction, bytes) in built {
            inspector.emitUndecoded(bytes, direction: direction, leg: Self.leg(receivedTravelling: direction.reversed), at: now)
        }
    }

    /// Writes the mediator's output in order, arms its timers and reports its verdicts. Frames
    /// that go back toward `source` (ACKs, ERRs) are flushed at once: the read batch flushes only
    /// the other side. Returns the frames it built, for capture.
    private func carryOut(_ output: MediatorOutput, original: ByteBuffer?, originalBytes: ByteBuffer?,
                          from source: SessionSide?, into actions: inout [SessionAction]) -> [(BLIPDirection, ByteBuffer)] {
        var wroteBack = false
        var built: [(BLIPDirection, ByteBuffer)] = []
        output.forEachSend { send in
            let destination = SessionSide(writing: send.direction)
            let mask: WebSocketMaskingKey? = destination.masksWrites ? .random() : nil
            let bytes: ByteBuffer
            switch send.payload {
            case .original:
                // A fragmented message leaves as one frame with the same BLIP bytes.
                bytes = original ?? WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary,
                                                               payload: originalBytes ?? ByteBuffer(), mask: mask,
                                                               allocator: allocator)
            case .bytes(let frame):
                bytes = WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.binary, payload: frame, mask: mask,
                                                   allocator: allocator)
                if observers.wants(.frameBytes) { built.append((send.direction, frame)) }
            }
            write(bytes, to: destination, into: &actions)
            statistics.framesForwarded[send.direction.rawValue] += 1
            statistics.bytesForwarded[send.direction.rawValue] += bytes.readableBytes
            if destination == source { wroteBack = true }
        }
        for timer in output.timers { actions.append(.schedule(.mediation(timer.token), timer.delay)) }
        if observers.wants(.messages) {
            for report in output.reports {
                observers.emit(.verdict(VerdictEvent(sessionID: info.id, report: report)), kind: .messages)
            }
        }
        // Verdicts are reported before the answer they caused can reach its peer.
        if wroteBack, let source { actions.append(.flush(source)) }
        return built
    }
}
