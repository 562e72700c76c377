import BLIPCore
import NIOConcurrencyHelpers
import Replication
import SyncGatewayLog

extension SessionRecording {
    // MARK: reading (viewers)

    /// Sync Gateway's lines kept and those past the budget; nil when the session does not join SG's log.
    public func syncGatewayLog() -> (entries: [SyncGatewayLogEntry], dropped: Int)? {
        state.withLockedValue { state in state.syncGateway.map { ($0.entries, $0.dropped) } }
    }

    /// The kept seq of each of the client's requests, by BLIP number (newest wins).
    public func clientRequestSeqs() -> [MessageNumber: Int] {
        state.withLockedValue { state in
            var seqs: [MessageNumber: Int] = [:]
            for record in state.ring where record.direction == .clientToServer && record.type == .request {
                seqs[record.number] = max(seqs[record.number] ?? record.seq, record.seq)
            }
            return seqs
        }
    }

    /// Sync Gateway's lines about the client's request `number`.
    public func syncGatewayLines(forRequest number: MessageNumber) -> [SyncGatewayLogLine] {
        state.withLockedValue { state in
            state.syncGateway?.entries.lazy.filter { $0.request == number }.map(\.line) ?? []
        }
    }

    public func snapshot() -> Snapshot {
        state.withLockedValue { state in
            Snapshot(total: state.total, oldest: state.total - state.ring.count, messages: state.messages,
                     bytes: state.bytes, errors: state.errors, previewsSkipped: state.previewsSkipped,
                     analysesSkipped: state.analysesSkipped,
                     closeReason: state.closeReason, endTime: state.endTime)
        }
    }

    /// Up to `limit` records from seq `from` on (clamped to the oldest kept), oldest first.
    public func records(from: Int, limit: Int) -> [MessageRecord] {
        state.withLockedValue { state in
            let start = max(from, state.total - state.ring.count)
            let end = min(state.total, start + max(0, limit))
            guard start < end else { return [] }
            let capacity = limits.maxMessagesPerSession
            return (start..<end).map { state.ring[$0 % capacity] }
        }
    }

    /// Every kept record matching `filter`, oldest first, at most `limit` from seq `from` on.
    public func records(matching filter: MessageFilter, from: Int, limit: Int) -> [MessageRecord] {
        var result: [MessageRecord] = []
        var next = from
        // Copy out in batches so the session is never held up for long.
        while result.count < limit {
            let batch = records(from: next, limit: 4096)
            guard let last = batch.last else { break }
            for record in batch where filter.matches(record) {
                result.append(record)
                if result.count == limit { break }
            }
            next = last.seq + 1
        }
        return result
    }

    /// Keeps formatted rows for the viewers that ask next (a row whose record changed meanwhile,
    /// or left the ring, is not kept).
    func keepRows(_ rows: [(seq: Int, link: Int, json: String)]) {
        let capacity = limits.maxMessagesPerSession
        state.withLockedValue { state in
            for row in rows where row.seq >= state.total - state.ring.count && row.seq < state.total {
                let slot = row.seq % capacity
                if state.ring[slot].seq == row.seq && state.ring[slot].link == row.link { state.ring[slot].row = row.json }
            }
        }
    }

    /// Requests waiting for their reply, as the pairing table holds them.
    var pendingRequests: Int { state.withLockedValue { $0.pending.count } }

    public func record(seq: Int) -> MessageRecord? { records(from: seq, limit: 1).first.flatMap { $0.seq == seq ? $0 : nil } }

    /// The newest kept message `direction`/`type`/`number` (a finding's or a timeline event's),
    /// at or before `time` when given.
    public func seq(of direction: BLIPDirection, type: MessageType?, number: MessageNumber, atOrBefore time: Double? = nil) -> Int? {
        state.withLockedValue { state in
            let capacity = limits.maxMessagesPerSession
            var seq = state.total - 1
            while seq >= state.total - state.ring.count {
                let record = state.ring[seq % capacity]
                if record.number == number, record.direction == direction, type.map({ $0 == record.type }) ?? true,
                   time.map({ record.time <= $0 + 1e-6 }) ?? true {
                    return seq
                }
                seq -= 1
            }
            return nil
        }
    }
}
