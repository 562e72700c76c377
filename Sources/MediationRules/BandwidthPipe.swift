import NIOCore

/// One direction of a session seen as a link of limited bandwidth, for the policy's `bandwidth`
/// action (the way a bandwidth-limiting fault proxy shapes a connection): each matched message
/// occupies the link for its size ÷ rate, after the messages that took it before. Messages that
/// arrive together are therefore spread out, one after the other, instead of each waiting only for
/// its own transfer time. Messages the rule does not match are not charged.
struct BandwidthPipe {
    /// When the last message on the link is through; nil before the first.
    private var freeAt: NIODeadline?

    /// How long to hold a message of `bytes` arriving at `now` on a link of `bytesPerSecond`
    /// (at least 1); marks the link busy until then.
    mutating func hold(bytes: Int, bytesPerSecond: Int, now: NIODeadline) -> TimeAmount {
        let transfer = TimeAmount.nanoseconds(Int64(Double(bytes) / Double(max(1, bytesPerSecond)) * 1e9))
        let start = max(now, freeAt ?? now)
        freeAt = start + transfer
        return freeAt! - now
    }
}
