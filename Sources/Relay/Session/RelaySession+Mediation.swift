import BLIPCore
import Mediation
import NIOCore
import NIOWebSocket

/// The NIO side of a mediating session: each complete WebSocket message is decoded by the
/// ``SessionMediator`` before anything is forwarded; its output is written (unchanged frames
/// through the pump's pass-through path, built frames as new binary messages masked toward the
/// upstream), its timers are armed on the session's event loop, its decode feeds the inspector
/// and its interventions become ``RelayEvent/verdict(_:)`` events.
///
/// A decode failure closes the session (the relay cannot forward what it cannot re-encode), with
/// the close code of ``RelayError/closeCode``.
extension RelaySession {
    func mediate(_ frame: WebSocketFrame, on hop: HopHandler) {
        guard let mediator else { return }
        let direction = hop.inboundDirection
        let pump = pumps[direction.rawValue]
        let whole = frame.fin && frame.opcode != .continuation
        let (message, tooLarge) = pump.message(completedBy: frame)
        if tooLarge {
            fail(RelayError(.decodeFailed(BLIPError(.frameTooLarge, "WebSocket message over the reassembly limit"),
                                          direction)))
            return
        }
        guard let bytes = message else { return }  // a fragment: wait for the rest
        let output: MediatorOutput
        do {
            output = try mediator.receive(bytes, travelling: direction)
        } catch {
            statistics.decodeErrors[direction.rawValue] += 1
            fail(RelayError(.decodeFailed(error, direction)))
            return
        }
        write(output, original: whole ? frame : nil, originalBytes: bytes, from: hop)
        if let decoded = output.decoded {
            inspector.inspect(decoded: decoded, bytes: bytes, direction: direction, statistics: &statistics)
        }
    }

    func mediationTimerFired(_ token: UInt64) {
        mediationTimers[token] = nil
        guard let mediator, !isFinished else { return }
        do {
            let output = try mediator.timerFired(token)
            write(output, original: nil, originalBytes: nil, from: nil)
            for hop in hops.compactMap({ $0 }) { hop.flush() }
        } catch {
            fail(RelayError(.decodeFailed(error, .clientToServer)))
        }
    }

    /// Sends the mediator's output in order, arms its timers and reports its verdicts. Frames that
    /// go back toward `source` (ACKs, ERRs) are flushed at once: the read batch flushes only the
    /// other hop.
    private func write(_ output: MediatorOutput, original: WebSocketFrame?, originalBytes: ByteBuffer?,
                       from source: HopHandler?) {
        var wroteBack = false
        output.forEachSend { send in
            let destination = hops[send.direction == .clientToServer ? HopHandler.Side.upstream.rawValue
                                                                     : HopHandler.Side.client.rawValue]
            let pump = pumps[send.direction.rawValue]
            let written: Int
            switch send.payload {
            case .original:
                if let original {
                    written = pump.forward(original, to: destination)
                } else {
                    // A fragmented message leaves as one frame with the same BLIP bytes.
                    written = pump.send(blipFrame: originalBytes ?? ByteBuffer(), to: destination)
                }
            case .bytes(let built):
                written = pump.send(blipFrame: built, to: destination)
            }
            statistics.framesForwarded[send.direction.rawValue] += 1
            statistics.bytesForwarded[send.direction.rawValue] += written
            if let source, destination === source { wroteBack = true }
        }
        if wroteBack { source?.flush() }
        for timer in output.timers {
            mediationTimers[timer.token] = eventLoop.scheduleTask(in: timer.delay) { [self] in
                mediationTimerFired(timer.token)
            }
        }
        guard !output.reports.isEmpty, observers.wants(.messages) else { return }
        for report in output.reports {
            observers.emit(.verdict(VerdictEvent(sessionID: info.id, direction: report.direction, number: report.number,
                                                 type: report.type, profile: report.profile, rule: report.rule,
                                                 action: report.action)), kind: .messages)
        }
    }
}
