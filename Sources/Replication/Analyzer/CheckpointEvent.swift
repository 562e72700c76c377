import BLIPCore

/// One getCheckpoint or setCheckpoint exchange: the MVCC revs involved, the outcome, and what
/// changed in the checkpoint body (replication-protocol §3 "getCheckpoint", "setCheckpoint").
public struct CheckpointEvent: Sendable, Equatable, Encodable {
    public enum Operation: String, Sendable, Codable { case get, set }

    public var time: Double
    public var from: String
    public var number: MessageNumber
    public var operation: Operation
    public var client: String
    public var collection: String?
    /// setCheckpoint: the rev the sender believed current; getCheckpoint: nil.
    public var requestRev: String?
    /// The rev the reply returned.
    public var replyRev: String?
    /// `ok`, `pending`, or the error, e.g. `HTTP 409`.
    public var outcome: String
    /// setCheckpoint: keys changed against the last checkpoint seen for this client.
    public var changes: [CheckpointChange]

    /// `setCheckpoint client=… rev 7-… → 8-…`.
    public var summary: String {
        switch operation {
        case .get: return "getCheckpoint client=\(client) → \(replyRev.map { "rev \($0)" } ?? outcome)"
        case .set:
            let result = outcome == "ok" ? (replyRev ?? "?") : outcome
            return "setCheckpoint client=\(client) \(SetCheckpointRequest.revText(requestRev)) → \(result)"
                + (changes.isEmpty ? "" : " [" + changes.map { "\($0.key): \($0.old ?? "∅")→\($0.new ?? "∅")" }.joined(separator: ", ") + "]")
        }
    }
}

/// The checkpoint story of one client ID within a session.
struct CheckpointState {
    var events: [CheckpointEvent] = []
    var body: JSONValue?
    var rev: String?
    var consecutiveConflicts = 0
    var conflicts = 0
}
