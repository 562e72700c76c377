import BLIPCore
import NIOCore

/// The request numbers of one direction on both sides of the relay (wire-format reference §4.4).
///
/// The relay numbers the requests it forwards 1, 2, 3 … itself, in the order their first frames
/// leave, so a request it swallows leaves no gap (a gap is fatal for LiteCore and go-blip). While
/// nothing is swallowed the map is the identity. Replies travelling back carry the forwarded
/// number; ``entry(forwarded:)`` maps them to the number the requester gave.
///
/// At most `maxAwaited` requests wait for their replies here (``BLIPLimits/maxAwaitedReplies``,
/// the decoder's own bound on the same requests): past it the oldest is forgotten, as the decoder
/// forgets it, so a peer that never answers cannot grow the table (each entry may hold a filtered
/// `changes` list's reply mapping).
struct MessageNumberMap {
    struct Entry {
        var original: MessageNumber
        var profile: String?
        var replyRewrite: ReplyRewrite?
    }

    private(set) var lastForwarded: MessageNumber = 0
    /// Requests forwarded that expect a reply, by forwarded number.
    private var awaiting: [MessageNumber: Entry] = [:]
    /// The forwarded numbers of ``awaiting`` in ascending order; may hold numbers already replied.
    private var order = CircularBuffer<MessageNumber>()
    private let maxAwaited: Int

    init(maxAwaited: Int) { self.maxAwaited = max(1, maxAwaited) }

    /// Requests waiting for their replies.
    var awaitingCount: Int { awaiting.count }

    /// Gives the next forwarded number to request `original`; records it when a reply is expected.
    mutating func assign(original: MessageNumber, expectsReply: Bool, profile: String?,
                         replyRewrite: ReplyRewrite?) -> MessageNumber {
        lastForwarded += 1
        if expectsReply {
            awaiting[lastForwarded] = Entry(original: original, profile: profile, replyRewrite: replyRewrite)
            order.append(lastForwarded)
            while awaiting.count > maxAwaited, let oldest = order.popFirst() { awaiting[oldest] = nil }
            if order.count > 2 * max(awaiting.count, 64) {
                // Mostly answered numbers: keep the order buffer near the table's size.
                order = CircularBuffer(order.filter { awaiting[$0] != nil })
            }
        }
        return lastForwarded
    }

    func entry(forwarded number: MessageNumber) -> Entry? { awaiting[number] }

    /// The reply to forwarded request `number` is complete.
    mutating func replied(forwarded number: MessageNumber) { awaiting[number] = nil }
}
