import BLIPCore

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
}
