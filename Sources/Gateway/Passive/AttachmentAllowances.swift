import Replication

/// Which attachments a client may fetch with getAttachment, as Sync Gateway decides it
/// (docs/sync-gateway-behaviour.md): only those of a rev being sent to it that awaits the
/// client's reply, from just before the rev goes out until its reply (or its failure) comes
/// back. Keyed by document and digest on CBMobile_3 and later, by digest alone on CBMobile_2;
/// counted, so two revs sharing an attachment each hold it. A client that asks at any other
/// time gets 403 "Attachment's doc not being synced", as from Sync Gateway.
///
/// Bounded by ``GatewayLimits/maxAllowedAttachments`` entries: a client that never answers the
/// revs it gets cannot grow it past that; revs sent beyond it allow nothing (their attachments
/// are refused). Confined to its connection's event loop: `@unchecked Sendable` only so a rev's
/// completion callback, which runs on that same loop, can withdraw what the rev allowed.
final class AttachmentAllowances: @unchecked Sendable {
    private var counts: [String: Int] = [:]
    private let byDocument: Bool
    private let limit: Int

    /// Sync Gateway's refusal of an attachment it does not allow now.
    static let refusal = GatewayError.forbidden("Attachment's doc not being synced")

    init(protocolVersion: Int, limit: Int) {
        byDocument = protocolVersion >= 3
        self.limit = limit
    }

    /// Allows `attachments` of `docID` until ``withdraw(_:of:)``; the keys it allowed.
    func allow(_ attachments: [AttachmentReference], of docID: String) -> [String] {
        var allowed: [String] = []
        for attachment in attachments {
            let key = key(docID: docID, digest: attachment.digest)
            guard counts[key] != nil || counts.count < limit else { continue }
            counts[key, default: 0] += 1
            allowed.append(key)
        }
        return allowed
    }

    /// Takes back what ``allow(_:of:)`` gave (the rev's reply came, or its send failed).
    func withdraw(_ keys: [String]) {
        for key in keys {
            guard let count = counts[key] else { continue }
            counts[key] = count > 1 ? count - 1 : nil
        }
    }

    /// Whether the client may fetch `digest` of `docID` now.
    func allows(docID: String?, digest: String?) -> Bool {
        guard let digest else { return false }
        return counts[key(docID: docID ?? "", digest: digest)] != nil
    }

    private func key(docID: String, digest: String) -> String { byDocument ? docID + "\u{0}" + digest : digest }
}
