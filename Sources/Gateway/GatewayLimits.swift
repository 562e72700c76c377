/// The gateway's and replicator's bounds, as named configuration (STYLE: no scattered literals).
///
/// Defaults follow what Sync Gateway and LiteCore do where the protocol leaves a choice
/// (replication-protocol §3 "changes": a sender SHOULD batch and SHOULD bound the changes
/// messages it has sent but not had answered).
public struct GatewayLimits: Sendable, Equatable {
    /// Changes messages a sender keeps unanswered before it waits for a reply (flow control).
    public var maxUnansweredChanges: Int
    /// Entries per changes / proposeChanges message when the peer asks for no `batch`.
    public var changesBatchSize: Int
    /// Largest `batch` a subChanges may ask for; larger requests are clamped.
    public var maxChangesBatchSize: Int
    /// Largest document body accepted in a rev / putRev (Sync Gateway refuses over 20 MB).
    public var maxDocumentSize: Int
    /// Largest attachment accepted from a peer.
    public var maxAttachmentSize: Int
    /// Revision-tree depth kept per document; sent as changes' `maxHistory` and caps rev histories.
    public var maxRevTreeDepth: Int
    /// Bytes of random nonce in a proveAttachment request (§3 "proveAttachment": 16–255; 20 is usual).
    public var proveAttachmentNonceSize: Int
    /// rev messages a pushing replicator keeps unanswered before waiting.
    public var maxUnansweredRevs: Int
    /// Attachments a connection's client may fetch at once: those of the revs sent to it that
    /// await its reply (``AttachmentAllowances``).
    public var maxAllowedAttachments = 10_000

    public init(maxUnansweredChanges: Int = 4, changesBatchSize: Int = 200, maxChangesBatchSize: Int = 1000,
                maxDocumentSize: Int = 20_000_000, maxAttachmentSize: Int = 20_000_000, maxRevTreeDepth: Int = 1000,
                proveAttachmentNonceSize: Int = 20, maxUnansweredRevs: Int = 200) {
        self.maxUnansweredChanges = maxUnansweredChanges
        self.changesBatchSize = changesBatchSize
        self.maxChangesBatchSize = maxChangesBatchSize
        self.maxDocumentSize = maxDocumentSize
        self.maxAttachmentSize = maxAttachmentSize
        self.maxRevTreeDepth = maxRevTreeDepth
        self.proveAttachmentNonceSize = proveAttachmentNonceSize
        self.maxUnansweredRevs = maxUnansweredRevs
    }

    public static let `default` = GatewayLimits()
}
