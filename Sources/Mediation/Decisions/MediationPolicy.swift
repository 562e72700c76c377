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
}

extension MediationPolicy {
    public func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount? { nil }
}
