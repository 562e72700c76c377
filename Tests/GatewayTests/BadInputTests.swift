import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import NIOCore
import Replication
import Testing

/// Malformed requests get the ERR reply Sync Gateway sends (`HTTP` domain, status as code), and
/// the gateway keeps serving that connection and others.
@Suite struct BadInputTests {
    private func send(_ connection: BLIPConnection, _ profile: String, _ properties: Properties = [:],
                      body: String = "") async throws -> BLIPMessage {
        try await connection.request(.request(profile: profile, properties: properties, body: ByteBuffer(string: body)))
    }

    private func expectError(_ reply: BLIPMessage, domain: String = "HTTP", code: Int,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.type == .error, sourceLocation: sourceLocation)
        #expect(reply.properties["Error-Domain"] == domain, sourceLocation: sourceLocation)
        #expect(reply.properties["Error-Code"] == String(code), sourceLocation: sourceLocation)
    }

    @Test func malformedRequestsGetSyncGatewayErrorsAndServiceContinues() async throws {
        try await withGateway(seed: { try $0.put("doc", body: ["v": .number("1")]) }) { gateway in
            let connection = try #require(try await gateway.dial().connection)
            expectError(try await send(connection, "proposeChanges", body: "[[\"a\", "), code: 400)
            expectError(try await send(connection, "rev", ["rev": "1-" + String(repeating: "a", count: 40)],
                                       body: "{\"v\":1}"), code: 400)
            expectError(try await send(connection, "rev", ["id": "x", "rev": "1-" + String(repeating: "a", count: 40)],
                                       body: "{not json"), code: 400)
            expectError(try await send(connection, "noSuchProfile"), domain: "BLIP", code: 404)
            expectError(try await send(connection, "getCheckpoint"), code: 400)
            expectError(try await send(connection, "getCheckpoint", ["client": "never-seen"]), code: 404)
            expectError(try await send(connection, "getRev", ["id": "missing"]), code: 404)
            let getRev = try await send(connection, "getRev", ["id": "doc"])
            #expect(getRev.type == .response)
            #expect(String(buffer: getRev.body) == "{\"v\":1}")
            expectError(try await send(connection, "getRev", ["id": "doc", "ifNotRev": getRev.properties["rev"]!]),
                        code: 304)
            // The same connection and a new replicator are still served.
            #expect(try await send(connection, "proposeChanges", body: "[[\"new\",\"1-\(String(repeating: "f", count: 40))\"]]").type == .response)
            let result = try await gateway.replicator(.pull, into: GatewayDatabase(name: "l")).run()
            #expect(result.pulledRevisions == 1)
            try await connection.close()
        }
    }

    /// A compressed message that inflates past the message limit (a decompression bomb spread
    /// over frames) ends only its own connection, with 1011 and the reason; the gateway stops
    /// inflating there and serves the next connection.
    @Test func aDecompressionBombEndsOnlyItsConnection() async throws {
        try await withGateway(configure: { $0.blipLimits.maxMessageSize = 4 << 20 },
                              seed: { try $0.put("doc", body: ["v": .number("1")]) }) { gateway in
            let attacker = try #require(try await gateway.dial().connection)
            let zeros = ByteBuffer(repeating: 0, count: 16 << 20)
            _ = try await attacker.send(.request(profile: "rev", properties: ["id": "bomb"], body: zeros, compressed: true))
            let close = try await attacker.closed.get()
            #expect(close.code == 1011)
            #expect(close.reason.contains("messageTooLarge"))
            let next = try #require(try await gateway.dial().connection)
            let getRev = try await send(next, "getRev", ["id": "doc"])
            #expect(String(buffer: getRev.body) == "{\"v\":1}")
            try await next.close()
        }
    }

    @Test func collectionIndexesAreCheckedOnCollectionAwareConnections() async throws {
        try await withGateway { gateway in
            let connection = try #require(try await gateway.dial().connection)
            let collections = try await send(connection, "getCollections",
                                             body: "{\"collections\":[\"inventory.hotels\",\"nope.nope\"],\"checkpoint_ids\":[\"a\",\"b\"]}")
            #expect(String(buffer: collections.body) == "[{},null]")
            expectError(try await send(connection, "getCheckpoint", ["client": "a", "collection": "7"]), code: 400)
            expectError(try await send(connection, "getCheckpoint", ["client": "a"]), code: 400)
            expectError(try await send(connection, "getCheckpoint", ["client": "a", "collection": "1"]), code: 404)
            expectError(try await send(connection, "changes", ["collection": "0"], body: "[[1,\"a\",\"1-\(String(repeating: "f", count: 40))\"]]"), code: 409)
            try await connection.close()

            let legacy = try #require(try await gateway.dial().connection)
            expectError(try await send(legacy, "getCheckpoint", ["client": "a", "collection": "0"]), code: 400)
            try await legacy.close()
        }
    }

    @Test func noconflictsRevThatWouldConflictIs409() async throws {
        try await withGateway(configure: { $0.conflictFree = false }, seed: { try $0.put("doc", body: [:]) }) { gateway in
            let connection = try #require(try await gateway.dial().connection)
            let current = try #require(gateway.database.document("doc")?.currentRevID)
            let unrelated = "1-" + String(repeating: "c", count: 40)
            let branch = "2-" + String(repeating: "d", count: 40)
            expectError(try await send(connection, "rev", ["id": "doc", "rev": branch, "history": unrelated,
                                                           "noconflicts": "true"], body: "{}"), code: 409)
            let child = "2-" + String(repeating: "e", count: 40)
            #expect(try await send(connection, "rev", ["id": "doc", "rev": child, "history": current,
                                                       "noconflicts": "true"], body: "{}").type == .response)
            // Without noconflicts a conflict-tolerant gateway stores the branch.
            #expect(try await send(connection, "rev", ["id": "doc", "rev": branch, "history": unrelated],
                                   body: "{}").type == .response)
            #expect(gateway.database.document("doc")?.conflictingRevIDs.isEmpty == false)
            try await connection.close()
        }
    }
}
