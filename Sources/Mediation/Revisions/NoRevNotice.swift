import BLIPCore
import ReplicationNames

/// The `norev` the relay sends in place of a `rev` it refused, so that the peer that asked for
/// the revision (through `changes`, `proposeChanges` or `getRev`) learns it is not coming
/// (replication-protocol §3 "norev").
///
/// Without it the asking side waits for ever: LiteCore's puller completes a one-shot pull only
/// when every requested revision has arrived or been answered with `norev`, and its passive side
/// stops answering `proposeChanges` while 200 requested revisions are outstanding
/// (docs/litecore-behaviour.md). The sender of the refused `rev` still gets the ERR.
///
/// A NoReply `rev` needs it just as much: Sync Gateway sends the revisions a client asked for
/// NoReply (docs/sync-gateway-behaviour.md), so only the receiver tracks them; swallowed without
/// a notice, LiteCore's one-shot pull never completes. Such a rev's sender is owed no answer.
///
/// The notice carries the revision's `id`, `rev`, `sequence` (LiteCore's puller marks that
/// sequence done with it) and `collection`, plus `error` (the refusal's status) and `reason`; it
/// is a NoReply request, as Sync Gateway sends its own.
public enum NoRevNotice {
    /// The notice replacing `head`'s message, or nil when it is not a `rev` request that names its
    /// document (`id`; a revision whose ID is only in its body cannot be named in a notice).
    public static func replacing(_ head: MediatedHead, refusal: ErrorReply) -> BLIPMessage? {
        guard head.type == .request, head.properties.profile == ReplicationProfile.rev.rawValue,
              head.properties[PropertyName.id.rawValue] != nil else { return nil }
        var properties: Properties = [PropertyName.profile.rawValue: ReplicationProfile.norev.rawValue]
        for name in [PropertyName.id, .rev, .sequence, .collection] {
            if let value = head.properties[name.rawValue] { properties[name.rawValue] = value }
        }
        properties[PropertyName.error.rawValue] = String(refusal.code)
        if !refusal.message.isEmpty { properties[PropertyName.reason.rawValue] = refusal.message }
        let flags = FrameFlags(type: .request, urgent: head.flags.isUrgent, noReply: true)
        return BLIPMessage(type: .request, flags: flags, properties: properties, body: .init())
    }
}
