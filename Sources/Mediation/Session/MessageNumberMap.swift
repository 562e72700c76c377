import BLIPCore

/// The request numbers of one direction on both sides of the relay (wire-format reference §4.4).
///
/// The relay numbers the requests it forwards 1, 2, 3 … itself, in the order their first frames
/// leave, so a request it swallows leaves no gap (a gap is fatal for LiteCore and go-blip). While
/// nothing is swallowed the map is the identity. Replies travelling back carry the forwarded
/// number; ``entry(forwarded:)`` maps them to the number the requester gave.
struct MessageNumberMap {
    struct Entry {
        var original: MessageNumber
        var profile: String?
        var replyRewrite: ReplyRewrite?
    }

    private(set) var lastForwarded: MessageNumber = 0
    /// Requests forwarded that expect a reply, by forwarded number.
    private var awaiting: [MessageNumber: Entry] = [:]

    /// Gives the next forwarded number to request `original`; records it when a reply is expected.
    mutating func assign(original: MessageNumber, expectsReply: Bool, profile: String?,
                         replyRewrite: ReplyRewrite?) -> MessageNumber {
        lastForwarded += 1
        if expectsReply {
            awaiting[lastForwarded] = Entry(original: original, profile: profile, replyRewrite: replyRewrite)
        }
        return lastForwarded
    }

    func entry(forwarded number: MessageNumber) -> Entry? { awaiting[number] }

    /// The reply to forwarded request `number` is complete.
    mutating func replied(forwarded number: MessageNumber) { awaiting[number] = nil }
}
