/// The arrival of one direction's numbered messages on one soak session: which numbers came,
/// which came twice, and which came after a later one had already overtaken them.
///
/// The order rule follows the sender's queue (wire-format reference §4.3; ``OutboundQueue``): first
/// frames leave in the order messages were queued, and a message carried by one frame is complete
/// with its first frame. So a one-frame message can never arrive after a message queued later;
/// when it does, it was overtaken, and that counts as reordered. A message of several frames is
/// multiplexed with those queued after it and may legitimately finish after them: it is not
/// counted. Numbers start at 1 and are given in queueing order by the sender.
///
/// Holds one bit per number up to the highest seen: bounded by what one session sends
/// (``SoakConfiguration/maxMessagesPerSession``).
public struct ArrivalOrder: Sendable, Equatable {
    public private(set) var received = 0
    public private(set) var reordered = 0
    public private(set) var duplicated = 0
    /// Numbers outside 1…``limit`` (never sent by a soak peer).
    public private(set) var outOfRange = 0
    public private(set) var highest: UInt64 = 0
    /// The largest number this session may carry.
    public let limit: UInt64
    private var seen: [UInt64] = []

    public init(limit: UInt64) {
        self.limit = limit
    }

    /// Records message `number`, which arrived in one frame (`singleFrame`) or several.
    public mutating func arrived(_ number: UInt64, singleFrame: Bool) {
        guard number >= 1, number <= limit else {
            outOfRange += 1
            return
        }
        let word = Int((number - 1) / 64), bit = UInt64(1) << ((number - 1) % 64)
        if word >= seen.count { seen.append(contentsOf: repeatElement(0, count: word + 1 - seen.count)) }
        guard seen[word] & bit == 0 else {
            duplicated += 1
            return
        }
        seen[word] |= bit
        received += 1
        if singleFrame && number < highest { reordered += 1 }
        highest = max(highest, number)
    }
}
