import BLIPCore
import NIOCore

/// Decides, per session, what the relay does with each message (ARCHITECTURE.md "The one
/// protocol fact that shapes the relay"). Called on the session's event loop, synchronously, for
/// every message in both directions: it must return quickly and never block.
///
/// ACK frames are not shown to the policy (wire-format reference §2.5).
public protocol MediationPolicy: AnyObject {
    /// The verdict once the message's properties are known.
    func decide(head: MediatedHead) -> HeadDecision
    /// The verdict on a complete message the head decision asked to see (``HeadDecision/Action/awaitBody``).
    func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision
    /// The "withhold ACKs" fault: how long to hold an ACK travelling in `direction` before it goes
    /// on, or nil to send it at once (the default). Holding ACKs changes no number, checksum or
    /// deflate state, so it does not switch a direction to re-encoding; the acknowledged sender
    /// pauses once 128,000 of its bytes are unacknowledged (wire-format reference §5).
    func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount?
    /// For a message the head decision paces (``HeadDecision/Action/pace(bytesPerSecond:)``): how
    /// long to hold one of its frames, `bytes` long (its uncompressed payload), that arrives now.
    /// A policy that models the link (the relay's `bandwidth` action) makes the frames of its
    /// paced messages take turns; by default each frame waits only for its own transfer time.
    func transferTime(of bytes: Int, travelling direction: BLIPDirection, bytesPerSecond: Int) -> TimeAmount
}

extension MediationPolicy {
    public func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount? { nil }

    public func transferTime(of bytes: Int, travelling direction: BLIPDirection, bytesPerSecond: Int) -> TimeAmount {
        .nanoseconds(Int64(Double(bytes) / Double(max(1, bytesPerSecond)) * 1e9))
    }
}
