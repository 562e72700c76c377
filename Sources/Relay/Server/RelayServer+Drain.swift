import NIOCore

/// How the wait of a drain ended.
enum DrainEnd: Sendable {
    /// Every live session ended by itself.
    case allEnded
    /// ``RelayConfiguration/drainTimeout`` passed with sessions still open.
    case timedOut
    /// ``RelayServer/stopDraining()`` cut it short (a second SIGTERM).
    case stopped
}

/// Draining (`SIGTERM`, a load balancer taking the relay out of its pool): not ready at once
/// (``Readiness/Reason/draining``), the listener closed, live sessions given up to a timeout to end
/// by themselves, then ``shutdown()``: the rest closed with 1001 (going away) to both sides, every
/// capture and the pcap written out and closed. Each phase is reported (``DrainPhase``) and logged.
extension RelayServer {
    /// Whether a drain began: `/readyz` answers 503, and a handshake still in the listener's
    /// queue is refused with 503.
    public var isDraining: Bool { state.withLockedValue { $0.draining } }

    /// Drains the relay: returns once every session is closed and every capture written.
    /// `timeout` (``RelayConfiguration/drainTimeout`` by default) bounds the wait for sessions to
    /// end by themselves; ``stopDraining()`` ends that wait at once. A second call waits as the first.
    public func drain(timeout: TimeAmount? = nil) async {
        let timeout = timeout ?? configuration.drainTimeout
        let eventLoop = group.next()
        let wait = eventLoop.makePromise(of: DrainEnd.self)
        let (listener, live, stopped) = state.withLockedValue { state in
            state.draining = true
            if state.drainWait == nil { state.drainWait = wait } else { state.drainWait?.futureResult.cascade(to: wait) }
            return (state.listener, state.sessions.count, state.drainStopped)
        }
        report(.started(liveSessions: live, timeout: timeout))
        try? await listener?.close()
        report(.listenerClosed)
        let timer = eventLoop.scheduleTask(in: timeout) { [self] in endDrainWait(.timedOut) }
        if stopped { endDrainWait(.stopped) } else if sessionCount == 0 { endDrainWait(.allEnded) }
        let end = (try? await wait.futureResult.get()) ?? .stopped
        timer.cancel()
        let left = sessionCount
        switch end {
        case .allEnded: report(.allEnded)
        case .timedOut: report(.timedOut(openSessions: left))
        case .stopped: report(.stopped(openSessions: left))
        }
        try? await shutdown()
        report(.done)
    }

    /// Ends a drain's wait now (a second SIGTERM, or Ctrl-C): the sessions still open are closed
    /// with 1001 and the captures written out as at the timeout. Called before the drain begins,
    /// the drain does not wait at all.
    public func stopDraining() {
        state.withLockedValue { $0.drainStopped = true }
        endDrainWait(.stopped)
    }

    func endDrainWait(_ end: DrainEnd) {
        let wait = state.withLockedValue { state -> EventLoopPromise<DrainEnd>? in
            defer { state.drainWait = nil }
            return state.drainWait
        }
        wait?.succeed(end)
    }

    private func report(_ phase: DrainPhase) {
        guard observerSet.wants(.sessions) else { return }
        observerSet.emit(.drain(phase), kind: .sessions)
    }
}
