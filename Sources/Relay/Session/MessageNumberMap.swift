import BLIPCore

/// Maps request numbers between the two connections of a session, per direction
/// (ARCHITECTURE.md "The one protocol fact"; wire-format reference §4.4).
///
/// Today it is the identity: pass-through changes no number. When a policy drops or injects a
/// request, the direction's offset changes, ``isIdentity`` turns false, and the pump must switch
/// that direction to re-encoding; replies and ACKs travelling back are mapped with ``replyNumber``.
struct MessageNumberMap {
    /// Per direction: upstream-side number = incoming number + offset (requests only).
    private var offsets: [Int64] = [0, 0]

    /// True while no number in `direction` (or its replies) needs rewriting.
    func isIdentity(_ direction: BLIPDirection) -> Bool {
        offsets[direction.rawValue] == 0 && offsets[direction.reversed.rawValue] == 0
    }

    /// The number request `number` travelling in `direction` carries after the relay.
    func requestNumber(_ number: MessageNumber, travelling direction: BLIPDirection) -> MessageNumber {
        MessageNumber(Int64(number) + offsets[direction.rawValue])
    }

    /// The number a reply (or ACK) travelling in `direction` carries after the relay: it answers
    /// a request that went the other way, so that direction's offset is undone.
    func replyNumber(_ number: MessageNumber, travelling direction: BLIPDirection) -> MessageNumber {
        MessageNumber(Int64(number) - offsets[direction.reversed.rawValue])
    }
}
