import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOHTTP1
import Replication

extension Replicator {
    /// Opens the WebSocket (replication-protocol §2): first without credentials; after a 401 with
    /// a Basic challenge, once more with them, as LiteCore does. Any other refusal, or a second
    /// 401, is thrown as ``GatewayError`` with the HTTP status.
    func connect(_ session: ActiveSession) async throws -> BLIPConnection {
        let endpoint = try configuration.endpoint()
        var client = BLIPWebSocketClient.Configuration()
        client.host = endpoint.host
        client.port = endpoint.port
        client.path = endpoint.path
        client.subprotocols = configuration.subprotocols
        client.tls = endpoint.secure ? (configuration.tls ?? BLIPClientTLS()) : nil
        client.onRequest = { request, handler in session.handle(request, from: handler) }
        var sentCredentials = false
        while true {
            let outcome: BLIPWebSocketClient.Outcome
            do {
                outcome = try await BLIPWebSocketClient.connect(client, group: eventLoop)
            } catch {
                throw GatewayError.connection("\(endpoint.host):\(endpoint.port): \(error)")
            }
            switch outcome {
            case .connected(let connection):
                guard let chosen = connection.subprotocol, configuration.subprotocols.contains(chosen) else {
                    try? await connection.close(code: 1002, reason: "Incompatible replication protocol")
                    throw GatewayError.refused(status: 1002, body: "the server chose no offered sub-protocol")
                }
                return connection
            case .refused(let status, let headers, let body):
                let challenged = headers.first(name: "WWW-Authenticate")?.lowercased().hasPrefix("basic") == true
                if status == .unauthorized, challenged, !sentCredentials,
                   let username = configuration.username, let password = configuration.password {
                    let token = Data("\(username):\(password)".utf8).base64EncodedString()
                    client.headers.replaceOrAdd(name: "Authorization", value: "Basic \(token)")
                    sentCredentials = true
                    continue
                }
                throw GatewayError.refused(status: Int(status.code), body: body)
            }
        }
    }

    /// The checkpoint ID: configured, or derived from the URL, the local database and the
    /// collection, so each (local, remote, collection) triple has its own.
    func checkpointID(for path: CollectionPath) -> String {
        if let id = configuration.checkpointID { return id }
        let seed = "\(configuration.url)|\(database.uuid)|\(path)"
        return "cp-" + SHA1.hash(Array(seed.utf8)).base64String
    }

    /// Gets the checkpoints (§5 step 2): getCollections in collection-aware mode, which also
    /// fails when the peer lacks a collection, or getCheckpoint in legacy mode (404 = none).
    func loadCheckpoints(_ connection: BLIPConnection, paths: [CollectionPath], legacy: Bool) async throws -> [CheckpointKeeper] {
        if legacy {
            let client = checkpointID(for: paths[0])
            let reply = try await connection.request(.request(profile: ReplicationProfile.getCheckpoint.rawValue,
                                                              properties: Properties([.client: client])))
            if let error = GatewayError.from(reply: reply), error.status != 404 { throw error }
            let body = reply.type == .error ? nil : try? JSONValue.parse(reply.body, what: "checkpoint")
            return [CheckpointKeeper(connection: connection, client: client, collectionIndex: nil,
                                     rev: reply.type == .error ? nil : reply.properties[.rev], body: body)]
        }
        let clients = paths.map(checkpointID(for:))
        let request = JSONValue.object([
            "collections": .array(paths.map { .string($0.scope == "_default" ? $0.name : $0.description) }),
            "checkpoint_ids": .array(clients.map(JSONValue.string)),
        ])
        let reply = try await connection.request(.request(profile: ReplicationProfile.getCollections.rawValue,
                                                          body: request.jsonBuffer))
        if let error = GatewayError.from(reply: reply) { throw error }
        guard let entries = try JSONValue.parse(reply.body, what: "getCollections reply").arrayValue,
              entries.count == paths.count else {
            throw GatewayError.badRequest("getCollections reply does not list \(paths.count) collections")
        }
        return try paths.indices.map { index in
            if entries[index].isNull { throw GatewayError.notFound("the peer has no collection \(paths[index])") }
            let members = entries[index].objectValue ?? [:]
            let rev = members["_rev"]?.stringValue ?? members[PropertyName.rev.rawValue]?.stringValue
            return CheckpointKeeper(connection: connection, client: clients[index], collectionIndex: index, rev: rev,
                                    body: members.isEmpty ? nil : entries[index])
        }
    }
}
