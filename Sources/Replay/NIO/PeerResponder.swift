import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers

/// Answers the live peer's requests with the recorded replies (``PeerRequestMatcher``), each when
/// what it waited for in the recording has happened again (``PeerReplyGate``), and keeps notes
/// for the report. Called on the connection's event loop; locked because the replay's task reads
/// the notes.
final class PeerResponder: Sendable {
    private struct State {
        var matcher: PeerRequestMatcher
        var gate = PeerReplyGate()
        var received = 0
        var exact = 0
        var held = 0
        var notes: [ReplayReport.PeerRequestNote] = []
    }

    private let state: NIOLockedValueBox<State>
    private let allowances: ReplayAllowances
    let inbox: ReplayInbox

    init(script: ReplayScript, allowances: ReplayAllowances, inbox: ReplayInbox) {
        state = NIOLockedValueBox(State(matcher: PeerRequestMatcher(peerRequests: script.peerRequests)))
        self.allowances = allowances
        self.inbox = inbox
    }

    func handle(_ request: BLIPMessage, from handler: BLIPChannelHandler) {
        let replies: [BLIPMessage] = state.withLockedValue { state in
            state.received += 1
            let profile = request.profile ?? "(no profile)"
            guard let match = state.matcher.match(request) else {
                state.notes.append(note(profile, request, "unmatched"))
                return request.isNoReply ? [] : [BLIPMessage.error(to: request.number, domain: "BLIP", code: 404,
                                                                  message: "no recorded \(profile) request to replay")]
            }
            if match.exact { state.exact += 1 }
            if match.reused { state.notes.append(note(profile, request, "reused")) }
            if request.isNoReply { return [] }
            guard let recorded = match.recorded.recordedReply else {
                state.notes.append(note(profile, request, "no recorded reply"))
                return [BLIPMessage.reply(to: request)]
            }
            let ready = state.gate.reply(PeerRequestMatcher.reply(recorded, answering: request), recorded: match.recorded)
            if !ready.contains(where: { $0.number == request.number }) { state.held += 1 }
            return ready
        }
        for reply in replies { handler.sendReply(reply) }
        inbox.push(.peerRequest(profile: request.profile))
    }

    /// Own request `index` was just queued on `handler` (on its event loop): replies waiting for
    /// it follow it out.
    func didSend(_ index: Int, on handler: BLIPChannelHandler) {
        for reply in state.withLockedValue({ $0.gate.didSend(index) }) { handler.sendReply(reply) }
    }

    /// The reply to own request `index` arrived (on `handler`'s event loop).
    func replyArrived(for index: Int, on handler: BLIPChannelHandler) {
        for reply in state.withLockedValue({ $0.gate.replyArrived(for: index) }) { handler.sendReply(reply) }
    }

    private func note(_ profile: String, _ request: BLIPMessage, _ outcome: String) -> ReplayReport.PeerRequestNote {
        ReplayReport.PeerRequestNote(profile: profile, number: request.number, outcome: outcome,
                                     allowedBy: outcome == "unmatched" ? allowances.allowance(profile: profile, path: "unmatched") : nil)
    }

    /// Replies waiting now for own requests or their replies.
    var heldReplies: Int { state.withLockedValue { $0.gate.heldCount } }

    /// Copies the counts and notes into `report`.
    func fill(_ report: inout ReplayReport) {
        state.withLockedValue { state in
            report.peerRequestsReceived = state.received
            report.peerRequestsMatchedExactly = state.exact
            report.peerRepliesHeld = state.held
            report.peerRequestNotes = state.notes
        }
    }
}
