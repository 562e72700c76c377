import Replication

extension GatewayDatabase {
    /// A stored checkpoint: its MVCC revision (`0-N`, not a document revision ID) and body
    /// (replication-protocol §3 "getCheckpoint").
    public struct StoredCheckpoint: Sendable, Equatable {
        public var rev: String
        public var body: JSONValue
    }

    static func checkpointKey(_ client: String, _ collection: CollectionPath) -> String { "\(collection)/\(client)" }

    public func checkpoint(client: String, in collection: CollectionPath = defaultCollection) -> StoredCheckpoint? {
        withState { state in
            state.checkpoints[Self.checkpointKey(client, collection)].map { StoredCheckpoint(rev: "0-\($0.rev)", body: $0.body) }
        }
    }

    /// Stores `body` under `client` if `rev` is the current MVCC revision (nil for a new
    /// checkpoint); otherwise 409, or 404 for a `rev` when none is stored, as Sync Gateway answers
    /// (§3 "setCheckpoint"). Returns the new revision.
    @discardableResult
    public func setCheckpoint(client: String, rev: String?, body: JSONValue,
                              in collection: CollectionPath = defaultCollection) throws(GatewayError) -> String {
        try withState { state throws(GatewayError) in
            let key = Self.checkpointKey(client, collection)
            let current = state.checkpoints[key].map { "0-\($0.rev)" }
            // Sync Gateway: a `rev` for a checkpoint it does not hold is 404, not a conflict.
            if rev != nil, current == nil { throw .notFound("missing") }
            guard rev == current else {
                throw .conflict("Document update conflict: checkpoint \(client) is at \(current ?? "no revision"), not \(rev ?? "new")")
            }
            let next = (state.checkpoints[key]?.rev ?? 0) + 1
            state.checkpoints[key] = (rev: next, body: body)
            return "0-\(next)"
        }
    }
}
