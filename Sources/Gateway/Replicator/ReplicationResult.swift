import Foundation

/// What one run of a ``Replicator`` did.
public struct ReplicationResult: Sendable, Equatable {
    /// Revisions added to the local database from the peer (tombstones included).
    public var pulledRevisions = 0
    /// Revisions the peer accepted from us.
    public var pushedRevisions = 0
    public var pulledAttachments = 0
    /// Attachments the peer fetched from us with getAttachment.
    public var pushedAttachments = 0
    /// Revisions the peer announced that were already here or not wanted.
    public var skippedRevisions = 0
    /// Conflicts met, surfaced for the caller to resolve (the replicator never resolves them).
    public var conflicts: [ReplicationConflict] = []
    /// Documents that failed for another reason (the peer's error, a norev).
    public var documentErrors: [DocumentError] = []
    /// The sub-protocol the server chose.
    public var subprotocol: String?

    public init() {}
}

/// A document that could not be replicated because the two sides' revisions diverged.
public struct ReplicationConflict: Sendable, Equatable, CustomStringConvertible {
    public enum Side: String, Sendable { case push, pull }
    public var docID: String
    /// The revision we tried to push, or the one pulled that created a branch.
    public var revID: String
    public var side: Side
    public var reason: String

    public var description: String { "\(side) conflict on \(docID) \(revID): \(reason)" }
}

public struct DocumentError: Sendable, Equatable, CustomStringConvertible {
    public var docID: String
    public var revID: String
    public var status: Int
    public var reason: String

    public var description: String { "\(docID) \(revID): \(status) \(reason)" }
}

/// The result, built up from the event loop and from the push task alike.
final class ResultCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var result = ReplicationResult()

    func update(_ body: (inout ReplicationResult) -> Void) { lock.withLock { body(&result) } }
    var snapshot: ReplicationResult { lock.withLock { result } }
}
