import BLIPCore

/// When a replication has done its work, per direction (replication-protocol §5).
///
/// - A pull is caught up once the peer sends the empty `changes` message after `subChanges`
///   (§5 Pull). That is the only signal the protocol has.
/// - A push has no such message, so "done" is read from what is outstanding: every `changes` or
///   `proposeChanges` the client sent has its reply; every revision the server asked for has
///   come as `rev` or `norev`; every `rev` the client sent has its reply (accepted or not); and
///   the checkpoint is saved: the client's last `setCheckpoint` was sent after the last of those
///   replies and succeeded (LiteCore saves on a timer, so the save that records the whole push
///   comes last). The checkpoint is not asked for when no revision was sent and no
///   `setCheckpoint` was tried: then there was nothing to record.
extension SessionState {
    struct Progress {
        /// Nil when the session does not replicate that way.
        var pullCaughtUp: Bool?
        var pushDone: Bool?
        /// When the last direction that replicates got there; nil unless all did.
        var caughtUpTime: Double?
    }

    func progress(pushes: Bool, pulls: Bool) -> Progress {
        var result = Progress()
        var times: [Double] = []
        if pulls {
            result.pullCaughtUp = caughtUpTime != nil
            if let caughtUpTime { times.append(caughtUpTime) }
        }
        if pushes {
            let push = pushDoneTime()
            result.pushDone = push != nil
            if let push { times.append(push) }
        }
        let all = (result.pullCaughtUp ?? true) && (result.pushDone ?? true) && (pushes || pulls)
        result.caughtUpTime = all ? times.max() : nil
        return result
    }

    /// When the push was done (the rules above); nil when it is not.
    private func pushDoneTime() -> Double? {
        let sender = BLIPDirection.clientToServer
        let awaitingReply = pending[sender.rawValue].values.contains { request in
            switch request.box.message.knownProfile {
            case .changes, .proposeChanges, .rev, .putRev: return true
            default: return false
            }
        }
        guard !awaitingReply, !wanted.values.contains(where: { $0.sender == sender }) else { return nil }
        let lastAnswer = lastPushAnswerTime ?? startTime ?? 0
        guard transfer[sender.rawValue].revisionsSent > 0 || lastCheckpointSave != nil else { return lastAnswer }
        guard let save = lastCheckpointSave, let saved = save.savedAt, save.sentAt >= lastAnswer else { return nil }
        return saved
    }
}
