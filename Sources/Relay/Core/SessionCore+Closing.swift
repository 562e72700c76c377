import BLIPCore
import BLIPNIO
import NIOCore
import WebSocketWire

/// Closing (wire-format reference §7): the ``CloseStateMachine`` decides, this carries out its
/// steps as actions and, at the end, reports the session's summary.
extension SessionCore {
    /// Ends the session for the relay's own reason: CLOSE with its code to both sides, then the
    /// connections close once both answered (or at the close timeout): closing at once can reset
    /// a connection whose peer is still sending, and the peer's stack then drops the unread CLOSE
    /// and reports 1006 instead of the relay's code (RFC 6455 §7.1.1). Code 1006 drops both.
    func fail(_ error: RelayError, into actions: inout [SessionAction]) {
        let attachedSides = SessionSide.allCases.filter { attached[$0.rawValue] }
        apply(closing.fail(error, attached: attachedSides), into: &actions)
    }

    /// `side`'s connection is gone.
    func connectionClosed(_ side: SessionSide, into actions: inout [SessionAction]) {
        inspectPending(into: &actions)
        apply(closing.connectionClosed(side, otherExists: attached[side.other.rawValue] || side == .upstream),
              into: &actions)
    }

    /// Carries out the close state machine's steps.
    func apply(_ steps: [CloseStateMachine.Action], into actions: inout [SessionAction]) {
        for step in steps {
            switch step {
            case .passOn:
                break  // done by the frame path, which has the received bytes
            case .sendClose(let side, let code, let reason):
                let payload = WebSocketClose(code: code, reason: reason).payload(allocator: allocator)
                let frame = WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.close, payload: payload,
                                                       mask: side.masksWrites ? .random() : nil, allocator: allocator)
                write(frame, to: side, into: &actions)
                // Flushed now: closing one channel may close the other before both are closed.
                actions.append(.flush(side))
            case .armTimeout: actions.append(.schedule(.closeTimeout, configuration.closeTimeout))
            case .cancelTimeout: actions.append(.cancel(.closeTimeout))
            case .closeBoth:
                actions.append(.close(.client))
                actions.append(.close(.upstream))
            case .drop(let side): actions.append(.drop(side))
            case .finished: finish(into: &actions)
            }
        }
    }

    private func finish(into actions: inout [SessionAction]) {
        inspectPending(into: &actions)  // every forwarded frame is reported before the summary
        policyMediation?.engine.sessionEnded(info.id)
        _ = chargeInProgress(0)
        actions.append(.cancel(.idleCheck))
        if isOpen, observers.wants(.sessions) {
            let closes = closing.received
            var summary = SessionSummary(info: info, clientClose: closes[0], upstreamClose: closes[1],
                                         relayError: closing.relayError, statistics: currentStatistics)
            if let analyzer = info.analyzer {
                let now = self.now.analyzerSeconds
                for (side, close) in [(BLIPDirection.clientToServer, closes[0]), (.serverToClient, closes[1])] {
                    // A drop has no CLOSE: no code (1006 is never on the wire) and no reason.
                    if let close {
                        analyzer.observeClose(from: side, code: close.abrupt ? nil : Int(close.code),
                                              reason: close.abrupt ? "" : close.reason, at: now)
                    }
                }
                summary.replication = analyzer.summary()
            }
            observers.emit(.sessionClosed(summary), kind: .sessions)
        }
        actions.append(.finished)
    }
}
