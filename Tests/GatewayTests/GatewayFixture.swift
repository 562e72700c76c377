import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import NIOCore
import NIOPosix
import Replication

/// A gateway on 127.0.0.1 with a free port, its database, and an event-loop group, for one test.
struct GatewayFixture {
    let group: MultiThreadedEventLoopGroup
    let server: GatewayServer
    let database: GatewayDatabase

    var url: String { "ws://127.0.0.1:\(server.port)/\(database.name)" }

    func replicator(_ direction: ReplicatorConfiguration.Direction, into local: GatewayDatabase,
                    _ configure: (inout ReplicatorConfiguration) -> Void = { _ in }) -> Replicator {
        var configuration = ReplicatorConfiguration(url: url, direction: direction)
        configure(&configuration)
        return Replicator(configuration: configuration, database: local, group: group)
    }

    /// Opens a raw BLIP connection (no replicator) offering `subprotocols`.
    func dial(subprotocols: [String] = ["BLIP_3+CBMobile_3"], headers: [(String, String)] = [],
              path: String? = nil) async throws -> BLIPWebSocketClient.Outcome {
        var client = BLIPWebSocketClient.Configuration()
        client.host = "127.0.0.1"
        client.port = server.port
        client.path = path ?? "/\(database.name)/_blipsync"
        client.subprotocols = subprotocols
        for (name, value) in headers { client.headers.add(name: name, value: value) }
        return try await BLIPWebSocketClient.connect(client, group: group)
    }
}

/// Runs `body` against a fresh gateway (seeded by `seed`), then stops everything, within `timeout`.
func withGateway(timeout: Duration = .seconds(60),
                 configure: (inout GatewayConfiguration) -> Void = { _ in },
                 seed: (GatewayDatabase) throws -> Void = { _ in },
                 _ body: @escaping @Sendable (GatewayFixture) async throws -> Void) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let database = GatewayDatabase(name: "db", collections: [CollectionPath(scope: "inventory", name: "hotels")])
    try seed(database)
    var configuration = GatewayConfiguration(databases: [database])
    configuration.port = 0
    configure(&configuration)
    let server = try await GatewayServer.start(configuration, group: group)
    let fixture = GatewayFixture(group: group, server: server, database: database)
    do {
        try await withTimeout(timeout) { try await body(fixture) }
    } catch {
        try? await server.stop()
        try? await group.shutdownGracefully()
        throw error
    }
    try await server.stop()
    try await group.shutdownGracefully()
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String { "the test did not finish in time" }
}

/// Runs `body`, failing with ``TimedOut`` when it takes longer than `limit`.
func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut()
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// Waits (bounded by the caller's timeout) until `condition` holds for `database`, re-checking on
/// every change: synchronizes on the database's change events, never on time.
func waitUntil(_ database: GatewayDatabase, _ condition: @escaping @Sendable (GatewayDatabase) -> Bool) async {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let token = database.addObserver { continuation.yield() }
    defer { database.removeObserver(token) }
    if condition(database) { return }
    for await _ in stream where condition(database) { return }
}

/// Every document of `collection` in `a` has the same current revision, deletion and body bytes in `b`.
func documentsMatch(_ a: GatewayDatabase, _ b: GatewayDatabase,
                    in collection: CollectionPath = GatewayDatabase.defaultCollection) -> Bool {
    let ids = a.documentIDs(in: collection)
    guard ids == b.documentIDs(in: collection) else { return false }
    for id in ids {
        guard let left = a.document(id, in: collection), let right = b.document(id, in: collection),
              left.currentRevID == right.currentRevID, left.isDeleted == right.isDeleted,
              left.body == right.body else { return false }
    }
    return true
}

extension GatewayDatabase {
    static func seeded(_ name: String = "local", count: Int, prefix: String = "doc") throws -> GatewayDatabase {
        let database = GatewayDatabase(name: name)
        for index in 0..<count {
            try database.put("\(prefix)-\(index)", body: ["index": .number(String(index)), "channels": .string("even")])
        }
        return database
    }
}
