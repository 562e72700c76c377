import BLIPCore
import NIOCore
import Replication

extension PassiveSession {
    /// getCollections (replication-protocol §3): makes the connection collection-aware and
    /// answers, per collection, its checkpoint, `{}` for none, or `null` when it does not exist.
    func getCollections(_ request: BLIPMessage, _ get: GetCollectionsRequest) throws(GatewayError) {
        guard case .undecided = mode else {
            throw .badRequest("getCollections must be the first message of a connection")
        }
        guard get.collections.count == get.checkpointIDs.count else {
            throw .badRequest("getCollections needs as many checkpoint_ids as collections")
        }
        let paths = get.collections.map { database.hasCollection($0) ? $0 : nil }
        mode = .aware(paths)
        let entries: [JSONValue] = zip(paths, get.checkpointIDs).map { path, client in
            guard let path else { return .null }
            guard let stored = database.checkpoint(client: client, in: path) else { return .object([:]) }
            var members = stored.body.objectValue ?? [:]
            members["_rev"] = .string(stored.rev)
            return .object(members)
        }
        peer.answer(request, body: JSONValue.array(entries).jsonBuffer)
    }

    /// getCheckpoint: the body and MVCC `rev`, or 404 for a client never seen (§3; SG's answer
    /// for a new client, wire-format reference §6).
    func getCheckpoint(_ request: BLIPMessage, _ get: GetCheckpointRequest, collection: CollectionPath) throws(GatewayError) {
        guard let client = get.client else { throw .badRequest("getCheckpoint lacks the client property") }
        guard let stored = database.checkpoint(client: client, in: collection) else { throw .notFound("missing") }
        peer.answer(request, properties: Properties([.rev: stored.rev]), body: stored.body.jsonBuffer)
    }

    /// setCheckpoint: stores the body if `rev` is current (409 otherwise) and answers the new `rev`.
    /// An empty `rev` is no `rev`, a new checkpoint, as Sync Gateway reads it: LiteCore's first
    /// save of a checkpoint sends `rev` with an empty value (docs/litecore-behaviour.md).
    func setCheckpoint(_ request: BLIPMessage, _ set: SetCheckpointRequest, collection: CollectionPath) throws(GatewayError) {
        guard let client = set.client else { throw .badRequest("setCheckpoint lacks the client property") }
        guard let body = set.body, body.objectValue != nil else { throw .badRequest("setCheckpoint body must be a JSON object") }
        let rev = try database.setCheckpoint(client: client, rev: set.rev.nonEmpty, body: body, in: collection)
        peer.answer(request, properties: Properties([.rev: rev]))
    }
}
