import BLIPCore
import BLIPNIO
import NIOCore

/// Plays one side's script over an open connection: sends each request when the
/// ``ReplayScheduler`` says so, collects the new replies, and compares them when the script is
/// done, the peer closed, or nothing arrived for ``ReplayConfiguration/stallTimeout``.
/// Peer requests are answered meanwhile by the ``PeerResponder`` on the event loop.
struct ReplayDriver {
    let script: ReplayScript
    let session: Int
    let configuration: ReplayConfiguration
    let connection: BLIPConnection
    let responder: PeerResponder

    /// Runs the script; in the client role closes with 1000 at the end, in the server role
    /// waits (within the stall limit) for the peer to close, as the recorded server did.
    func run() async -> ReplayReport {
        var scheduler = ReplayScheduler(script: script, timing: configuration.timing)
        var report = ReplayReport(side: script.side, session: session, timing: configuration.timing.description,
                                  requestsScripted: script.requests.count, peerRequestsRecorded: script.peerRequests.count)
        report.subprotocol = connection.subprotocol
        report.captureProblems = script.captureProblems
        var replies: [Int: BLIPMessage] = [:]
        var closed = false
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Double {
            let duration = clock.now - start
            return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        func take(_ event: ReplayEvent) {
            switch event {
            case .reply(let index, let message):
                if let message { replies[index] = message }
                scheduler.replyArrived(for: index)
            case .peerRequest(let profile):
                scheduler.peerRequestArrived(profile: profile)
            case .closed(let code):
                closed = true
                report.peerCloseCode = code.map(Int.init)
            }
        }
        loop: while !closed {
            switch scheduler.next(at: elapsed()) {
            case .send(let index):
                guard await send(index) else {
                    closed = true
                    break loop
                }
                scheduler.didSend(index)
            case .finished:
                break loop
            case .waitForPeer:
                guard let event = await responder.inbox.next(timeout: configuration.stallTimeout) else {
                    report.endedEarly = stallReason(scheduler)
                    break loop
                }
                take(event)
            case .waitUntil(let due):
                let wait = max(0, due - elapsed())
                if let event = await responder.inbox.next(timeout: .nanoseconds(Int64(wait * 1e9))) { take(event) }
            }
        }
        if closed, scheduler.next(at: .infinity) != .finished, report.endedEarly == nil {
            report.endedEarly = "the peer closed the connection (code \(report.peerCloseCode.map(String.init) ?? "none")) "
                + "with \(script.requests.count - scheduler.sent) request(s) unsent and "
                + "\(scheduler.outstandingReplies) repl(ies) outstanding"
        }
        if !closed { await finish(&report) }
        report.requestsSent = scheduler.sent
        let comparator = ReplyComparator(allowances: configuration.allowances)
        report.entries = script.requests.map { scripted in
            comparator.entry(for: scripted, newReply: replies[scripted.index], sent: scripted.index < scheduler.sent)
        }
        responder.fill(&report)
        return report
    }

    /// Sends request `index`; its reply (or nil on close) comes back through the inbox.
    private func send(_ index: Int) async -> Bool {
        let recorded = configuration.substitutions.apply(to: script.requests[index].request)
        var flags = recorded.flags
        flags.hasMoreComing = false
        let outgoing = BLIPMessage(type: .request, flags: flags, properties: recorded.properties, body: recorded.body)
        let responder = self.responder
        do {
            // On the event loop: the request is queued, then the peer replies that waited for it
            // (``PeerReplyGate``) follow it out; its reply releases those that waited for that.
            try await connection.onLoop { handler in
                let future = handler.sendRequest(outgoing)
                responder.didSend(index, on: handler)
                guard !outgoing.isNoReply else { return }
                future.assumeIsolated().whenComplete { result in
                    let reply = try? result.get()
                    if reply != nil { responder.replyArrived(for: index, on: handler) }
                    responder.inbox.push(.reply(index: index, reply))
                }
            }
            return true
        } catch {
            return false
        }
    }

    /// Client role: close with 1000 and wait for the echo. Server role: wait for the client's
    /// close, and close with 1000 when none comes within the stall limit (a continuous client).
    private func finish(_ report: inout ReplayReport) async {
        if script.side == .client { try? await connection.close(code: 1000, reason: "") }
        while let event = await responder.inbox.next(timeout: configuration.stallTimeout) {
            if case .closed(let code) = event {
                report.peerCloseCode = code.map(Int.init)
                return
            }
        }
        if script.side == .server { try? await connection.close(code: 1000, reason: "replay finished") }
        try? await connection.channel.close()
    }

    private func stallReason(_ scheduler: ReplayScheduler) -> String {
        let held = responder.heldReplies
        let holding = held == 0 ? "" : "; \(held) repl(ies) to the peer held for own requests, as recorded"
        if scheduler.sent < script.requests.count {
            return "stalled before request \(scheduler.sent) (\(script.requests[scheduler.sent].profile)), "
                + "waiting for \(scheduler.blocker(of: scheduler.sent))" + holding
        }
        return "stalled after the last request: \(scheduler.outstandingReplies) repl(ies) outstanding, "
            + "\(scheduler.peerRequestsSeen) of \(script.peerRequests.count) peer requests received" + holding
    }
}
