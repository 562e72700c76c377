import BLIPCore
import BLIPNIO
import NIOCore
import Replication

/// One collection's replication checkpoint on the peer (replication-protocol §3 "getCheckpoint",
/// "setCheckpoint"; §5 steps 2 and 9–10): `{"local": <last pushed local sequence>,
/// "remote": <last pulled remote sequence>}` under the client ID, saved with the MVCC `rev` the
/// peer last gave (a 409 refreshes it and retries once). Saves never overlap.
actor CheckpointKeeper {
    private let connection: BLIPConnection
    private let client: String
    private let collectionIndex: Int?
    private var rev: String?
    private var body: [String: JSONValue]
    private var saved: [String: JSONValue]?
    private var lastSave: Task<Void, any Error>?

    init(connection: BLIPConnection, client: String, collectionIndex: Int?, rev: String?, body: JSONValue?) {
        self.connection = connection
        self.client = client
        self.collectionIndex = collectionIndex
        self.rev = rev
        var members = body?.objectValue ?? [:]
        members.removeValue(forKey: "_rev")
        members.removeValue(forKey: PropertyName.rev.rawValue)
        self.body = members
        self.saved = body == nil ? nil : members
    }

    /// The remote sequence to pull after, from the stored checkpoint.
    var remote: JSONValue? { body["remote"] }
    /// The local sequence pushed through, from the stored checkpoint.
    var local: UInt64 { body["local"]?.sequenceNumber ?? 0 }

    func noteRemote(_ sequence: JSONValue) { body["remote"] = sequence }
    func noteLocal(_ sequence: UInt64) { body["local"] = .number(String(sequence)) }

    /// Saves unless nothing changed since the last save. Saves run one after another: each
    /// waits for the one before it, so the last caller's state is the one stored last.
    func save() async throws {
        let previous = lastSave
        let task = Task {
            _ = try? await previous?.value
            try await self.saveNow()
        }
        lastSave = task
        try await task.value
    }

    private func saveNow() async throws {
        guard saved != body else { return }
        let snapshot = body
        do {
            try await store(snapshot)
        } catch let error as GatewayError where error.isConflict {
            try await refreshRev()
            try await store(snapshot)
        }
        saved = snapshot
    }

    private func store(_ snapshot: [String: JSONValue]) async throws {
        var properties = Properties([.client: client])
        if let rev { properties[.rev] = rev }
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        let reply = try await connection.request(.request(profile: ReplicationProfile.setCheckpoint.rawValue,
                                                          properties: properties,
                                                          body: JSONValue.object(snapshot).jsonBuffer))
        if let error = GatewayError.from(reply: reply) { throw error }
        rev = reply.properties[.rev]
    }

    private func refreshRev() async throws {
        var properties = Properties([.client: client])
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        let reply = try await connection.request(.request(profile: ReplicationProfile.getCheckpoint.rawValue,
                                                          properties: properties))
        rev = reply.type == .error ? nil : reply.properties[.rev]
    }
}
