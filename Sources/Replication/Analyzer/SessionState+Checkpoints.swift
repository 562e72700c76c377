import BLIPCore

extension SessionState {
    // Checkpoint states are changed in place in the dictionary (through static helpers, so no
    // other access to `self` overlaps): a copy taken out would copy the whole event history on
    // every exchange.

    mutating func recordCheckpointGet(client: String?, reply: ReplicationMessage, error: ErrorReply?,
                                      from direction: BLIPDirection, at time: Double) {
        guard let client else { return }
        var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .get,
                                    client: client, collection: reply.collectionName, requestRev: nil, replyRev: nil,
                                    outcome: "ok", changes: [])
        if case .checkpoint(let checkpoint) = reply.content {
            event.replyRev = checkpoint.rev
            Self.store(checkpoint, in: &checkpoints[client, default: CheckpointState()])
        } else if let error {
            event.outcome = error.code == 404 ? "none (404)" : error.key
        }
        Self.append(event, to: &checkpoints[client, default: CheckpointState()], limit: limits.maxCheckpointEvents)
    }

    mutating func recordCheckpointSet(_ sent: SetCheckpointRequest, reply: ReplicationMessage, error: ErrorReply?,
                                      from direction: BLIPDirection, at time: Double) {
        guard let client = sent.client else { return }
        let outcome = Self.applySet(sent, reply: reply, error: error, time: time, from: direction, limits: limits,
                                    to: &checkpoints[client, default: CheckpointState()])
        if outcome.saved { standingStopped(.checkpoint(client: client), at: time) }
        guard let inARow = outcome.conflictsInARow, inARow >= limits.checkpointConflictLoopThreshold else { return }
        let connection = connection  // the closure may not capture self, which is being changed
        standingOccurred(.checkpoint(client: client), count: inARow) {
            let server = outcome.serverRev.map { "server has \($0)" } ?? "no checkpoint rev seen in this session"
            return Finding(kind: .checkpointConflictLoop, connection: connection, time: time, side: direction.reversed,
                           profile: reply.profile, number: reply.number,
                           message: "setCheckpoint client=\(client) keeps failing with 409: "
                               + "\(SetCheckpointRequest.revText(sent.rev)) is stale; \(server)")
        }
    }

    /// Records a setCheckpoint exchange in `state`: whether it saved the checkpoint, the 409s in
    /// a row when it was one, and the last rev seen for the checkpoint.
    private static func applySet(_ sent: SetCheckpointRequest, reply: ReplicationMessage, error: ErrorReply?, time: Double,
                                 from direction: BLIPDirection, limits: AnalyzerLimits,
                                 to state: inout CheckpointState) -> (saved: Bool, conflictsInARow: Int?, serverRev: String?) {
        var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .set,
                                    client: sent.client ?? "", collection: reply.collectionName, requestRev: sent.rev, replyRev: nil,
                                    outcome: "ok", changes: CheckpointChange.diff(from: state.body, to: sent.body))
        var saved = false
        var inARow: Int?
        if let error {
            event.outcome = error.key
            if error.code == 409 {
                state.conflicts += 1
                state.consecutiveConflicts += 1
                inARow = state.consecutiveConflicts
            }
        } else if case .setCheckpointReply(let answer) = reply.content {
            event.replyRev = answer.rev
            state.rev = answer.rev
            state.body = sent.body
            state.consecutiveConflicts = 0
            saved = true
        }
        append(event, to: &state, limit: limits.maxCheckpointEvents)
        return (saved, inARow, state.rev)
    }

    mutating func recordCollectionCheckpoints(_ sent: GetCollectionsRequest, reply: ReplicationMessage,
                                              from direction: BLIPDirection, at time: Double) {
        guard case .getCollectionsReply(let answer) = reply.content else { return }
        for (index, entry) in answer.entries.enumerated() where index < sent.checkpointIDs.count {
            let client = sent.checkpointIDs[index]
            var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .get,
                                        client: client, collection: sent.collections[safe: index]?.description,
                                        requestRev: nil, replyRev: nil, outcome: "ok", changes: [])
            switch entry {
            case .checkpoint(let checkpoint):
                event.replyRev = checkpoint.rev
                Self.store(checkpoint, in: &checkpoints[client, default: CheckpointState()])
            case .noCheckpoint:
                event.outcome = "none"
            case .missingCollection:
                event.outcome = "collection missing"
            }
            Self.append(event, to: &checkpoints[client, default: CheckpointState()], limit: limits.maxCheckpointEvents)
        }
    }

    private static func store(_ checkpoint: Checkpoint, in state: inout CheckpointState) {
        state.body = checkpoint.body
        state.rev = checkpoint.rev
    }

    private static func append(_ event: CheckpointEvent, to state: inout CheckpointState, limit: Int) {
        state.events.append(event)
        if state.events.count > limit {
            state.events.removeFirst(state.events.count - limit)
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
