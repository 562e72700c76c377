import BLIPCore

extension SessionState {
    mutating func recordCheckpointGet(client: String?, reply: ReplicationMessage, error: ErrorReply?,
                                      from direction: BLIPDirection, at time: Double) {
        guard let client else { return }
        var state = checkpoints[client] ?? CheckpointState()
        var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .get,
                                    client: client, collection: reply.collectionName, requestRev: nil, replyRev: nil,
                                    outcome: "ok", changes: [])
        if case .checkpoint(let checkpoint) = reply.content {
            state.body = checkpoint.body
            state.rev = checkpoint.rev
            event.replyRev = checkpoint.rev
        } else if let error {
            event.outcome = error.code == 404 ? "none (404)" : error.key
        }
        append(event, to: &state)
        checkpoints[client] = state
    }

    mutating func recordCheckpointSet(_ sent: SetCheckpointRequest, reply: ReplicationMessage, error: ErrorReply?,
                                      from direction: BLIPDirection, at time: Double) {
        guard let client = sent.client else { return }
        var state = checkpoints[client] ?? CheckpointState()
        var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .set,
                                    client: client, collection: reply.collectionName, requestRev: sent.rev, replyRev: nil,
                                    outcome: "ok", changes: CheckpointChange.diff(from: state.body, to: sent.body))
        if let error {
            event.outcome = error.key
            if error.code == 409 {
                state.conflicts += 1
                state.consecutiveConflicts += 1
                if state.consecutiveConflicts == limits.checkpointConflictLoopThreshold {
                    report(.checkpointConflictLoop, side: direction.reversed, message: reply, at: time,
                           text: "setCheckpoint client=\(client) refused with 409 \(state.consecutiveConflicts) times in a row "
                               + "(rev \(sent.rev ?? "(new)") is stale; server has \(state.rev ?? "unknown"))")
                }
            }
        } else if case .setCheckpointReply(let answer) = reply.content {
            event.replyRev = answer.rev
            state.rev = answer.rev
            state.body = sent.body
            state.consecutiveConflicts = 0
        }
        append(event, to: &state)
        checkpoints[client] = state
    }

    mutating func recordCollectionCheckpoints(_ sent: GetCollectionsRequest, reply: ReplicationMessage,
                                              from direction: BLIPDirection, at time: Double) {
        guard case .getCollectionsReply(let answer) = reply.content else { return }
        for (index, entry) in answer.entries.enumerated() where index < sent.checkpointIDs.count {
            let client = sent.checkpointIDs[index]
            var state = checkpoints[client] ?? CheckpointState()
            var event = CheckpointEvent(time: time, from: direction.reversed.description, number: reply.number, operation: .get,
                                        client: client, collection: sent.collections[safe: index]?.description,
                                        requestRev: nil, replyRev: nil, outcome: "ok", changes: [])
            switch entry {
            case .checkpoint(let checkpoint):
                state.body = checkpoint.body
                state.rev = checkpoint.rev
                event.replyRev = checkpoint.rev
            case .noCheckpoint:
                event.outcome = "none"
            case .missingCollection:
                event.outcome = "collection missing"
            }
            append(event, to: &state)
            checkpoints[client] = state
        }
    }

    private func append(_ event: CheckpointEvent, to state: inout CheckpointState) {
        state.events.append(event)
        if state.events.count > limits.maxCheckpointEvents {
            state.events.removeFirst(state.events.count - limits.maxCheckpointEvents)
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
