import BLIPCore
import Capture
import Mediation
import NIOCore
import NIOWebSocket

/// The NIO side of a mediating session: each complete WebSocket message is decoded by the
/// ``SessionMediator`` before anything is forwarded; its output is written (unchanged frames
/// through the pump's pass-through path, built frames as new binary messages masked toward the
/// upstream), its timers are armed on the session's event loop, its decode feeds the inspector
/// and its interventions become ``RelayEvent/verdict(_:)`` events. While the mediator holds more
/// than ``MediationLimits/maxDelayedBytes`` for timers in a direction, that direction's sender is
/// not read (``mayRead(_:)``); the timer that brings it back under resumes the read.
///
/// A decode failure closes the session (the relay cannot forward what it cannot re-encode), with
/// the close code of ``RelayError/closeCode``.
extension RelaySession {
    /// `raw`: the frame as received, written as it is when the mediator lets it pass unchanged.
    func mediate(_ frame: WebSocketFrame, on hop: HopHandler, raw: ByteBuffer) {
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
        let built = write(output, original: whole ? raw : nil, originalBytes: bytes, from: hop)
        if let decoded = output.decoded {
            // Forwarded as it came, the frame crossed both legs; otherwise only its sender's.
            var passed = false
            output.forEachSend { send in
                if case .original = send.payload, send.direction == direction { passed = true }
            }
            inspector.inspect(decoded: decoded, bytes: bytes, direction: direction, statistics: &statistics,
                              leg: passed ? .both : Self.leg(receivedTravelling: direction))
        }
        recordBuilt(built)
    }

    /// The leg a frame travelling `direction` arrives on.
    static func leg(receivedTravelling direction: BLIPDirection) -> CaptureLeg {
        direction == .clientToServer ? .client : .upstream
    }

    /// Frames the relay built (re-encoded, its own ERRs and ACKs) for capture, each on the leg it
    /// was sent on: the receiver's.
    private func recordBuilt(_ built: [(BLIPDirection, ByteBuffer)]) {
        guard observers.wants(.frameBytes) else { return }
        for (direction, bytes) in built {
            inspector.emitUndecoded(bytes, direction: direction, leg: Self.leg(receivedTravelling: direction.reversed))
        }
    }

    func mediationTimerFired(_ token: UInt64) {
        mediationTimers[token] = nil
        guard let mediator, !isFinished else { return }
        do {
            let output = try mediator.timerFired(token)
            recordBuilt(write(output, original: nil, originalBytes: nil, from: nil))
            for hop in hops.compactMap({ $0 }) { hop.flush() }
            // Back under the delay budget: a hop held for it reads again (a no-op for a hop not held).
            for hop in hops.compactMap({ $0 }) where mayRead(hop) { hop.resumeReading() }
        } catch {
            fail(RelayError(.decodeFailed(error, .clientToServer)))
        }
    }

    /// Sends the mediator's output in order, arms its timers and reports its verdicts. Frames that
    /// go back toward `source` (ACKs, ERRs) are flushed at once: the read batch flushes only the
    /// other hop.
    @discardableResult
    private func write(_ output: MediatorOutput, original: ByteBuffer?, originalBytes: ByteBuffer?,
                       from source: HopHandler?) -> [(BLIPDirection, ByteBuffer)] {
        var wroteBack = false
        var built: [(BLIPDirection, ByteBuffer)] = []
        output.forEachSend { send in
            let destination = hops[send.direction == .clientToServer ? HopHandler.Side.upstream.rawValue
                                                                     : HopHandler.Side.client.rawValue]
            let pump = pumps[send.direction.rawValue]
            let written: Int
            switch send.payload {
            case .original:
                if let original {
                    pump.forward(raw: original, to: destination)
                    written = original.readableBytes
                } else {
                    // A fragmented message leaves as one frame with the same BLIP bytes.
                    written = pump.send(blipFrame: originalBytes ?? ByteBuffer(), to: destination)
                }
            case .bytes(let bytes):
                written = pump.send(blipFrame: bytes, to: destination)
                if observers.wants(.frameBytes) { built.append((send.direction, bytes)) }
            }
            statistics.framesForwarded[send.direction.rawValue] += 1
            statistics.bytesForwarded[send.direction.rawValue] += written
            if let source, destination === source { wroteBack = true }
        }
        for timer in output.timers {
            mediationTimers[timer.token] = eventLoop.scheduleTask(in: timer.delay) { [self] in
                mediationTimerFired(timer.token)
            }
        }
        if observers.wants(.messages) {
            for report in output.reports {
                observers.emit(.verdict(VerdictEvent(sessionID: info.id, direction: report.direction, number: report.number,
                                                     type: report.type, profile: report.profile, rule: report.rule,
                                                     action: report.action)), kind: .messages)
            }
        }
        // Verdicts are reported before the answer they caused can reach its peer.
        if wroteBack { source?.flush() }
        return built
    }
}
