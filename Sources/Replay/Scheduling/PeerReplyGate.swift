import BLIPCore

/// Holds the replaying side's replies to the peer's requests until what the recorded reply
/// waited for has happened again: the own requests that went out between the request's arrival
/// and the reply, and the replies to them that came back in that time
/// (``RecordedPeerRequest/replyAwaitsSent``, ``RecordedPeerRequest/replyAwaitsReplies``).
///
/// A gateway answers a pushed `rev` only after its `getAttachment` for the revision's new
/// attachment is answered; a replicator takes the `rev` reply as the end of that revision's push
/// and may close once it has all of them. A replay that answered at once would race its own
/// `getAttachment` against that close. Pure: the shell reports what it sent and what came back,
/// and sends the replies each call releases, in the order their requests arrived.
public struct PeerReplyGate: Sendable {
    private struct Held: Sendable {
        var reply: BLIPMessage
        var awaitsSent: Int
        var awaitsReplies: [Int]
    }

    private var sent = 0
    private var replied: Set<Int> = []
    private var held: [Held] = []

    public init() {}

    /// Replies waiting for their turn.
    public var heldCount: Int { held.count }

    /// `reply` to the peer's request recorded as `recorded`: returned when it may go now, kept
    /// otherwise. A reply with nothing to wait for is not held behind one that has.
    public mutating func reply(_ reply: BLIPMessage, recorded: RecordedPeerRequest) -> [BLIPMessage] {
        held.append(Held(reply: reply, awaitsSent: recorded.replyAwaitsSent, awaitsReplies: recorded.replyAwaitsReplies))
        return release()
    }

    /// Own request `index` went out (requests go out in order, so all before it did too).
    public mutating func didSend(_ index: Int) -> [BLIPMessage] {
        sent = max(sent, index + 1)
        return release()
    }

    /// The reply to own request `index` came back.
    public mutating func replyArrived(for index: Int) -> [BLIPMessage] {
        replied.insert(index)
        return release()
    }

    /// The held replies now free to go, in the order their requests arrived.
    private mutating func release() -> [BLIPMessage] {
        guard !held.isEmpty else { return [] }
        let (sent, replied) = (self.sent, self.replied)
        var ready: [BLIPMessage] = []
        held.removeAll { entry in
            guard sent >= entry.awaitsSent, entry.awaitsReplies.allSatisfy(replied.contains) else { return false }
            ready.append(entry.reply)
            return true
        }
        return ready
    }
}
