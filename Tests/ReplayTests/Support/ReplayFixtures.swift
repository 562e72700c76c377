import BLIPCore
import Foundation
import Gateway
import Logging
import NIOCore
import NIOPosix
import Relay
import Replay
import Replication
import Testing

/// Runs `body` within `limit`, failing with ``TimedOut`` when it takes longer.
func withTimeout<T: Sendable>(_ limit: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
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

/// Runs `body` with a fresh event-loop group within `limit`, then shuts the group down.
func withLoopback(_ limit: Duration = .seconds(60),
                  _ body: @escaping @Sendable (MultiThreadedEventLoopGroup) async throws -> Void) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let outcome: Result<Void, any Error>
    do {
        outcome = .success(try await withTimeout(limit) { try await body(group) })
    } catch {
        outcome = .failure(error)
    }
    try await group.shutdownGracefully()
    try outcome.get()
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String { "the test did not finish in time" }
}

/// A gateway on 127.0.0.1 with a free port serving one database `db`.
struct RunningGateway: Sendable {
    let server: GatewayServer
    let database: GatewayDatabase

    var url: String { "ws://127.0.0.1:\(server.port)/db" }

    static func start(group: EventLoopGroup, users: [String: String] = [:],
                      seed: (GatewayDatabase) throws -> Void = { _ in }) async throws -> RunningGateway {
        let database = GatewayDatabase(name: "db")
        try seed(database)
        var configuration = GatewayConfiguration(databases: [database])
        configuration.port = 0
        configuration.users = users
        configuration.logger = Logger(label: "test.gateway") { _ in SwiftLogNoOpLogHandler() }
        return RunningGateway(server: try await GatewayServer.start(configuration, group: group), database: database)
    }
}

/// The documents the tests replicate: an update, a tombstone and an attachment on the gateway
/// side; a new document with an attachment and an edit on the local side.
enum ReplaySeeds {
    static let attachmentText = "replayed attachment"

    static func gateway(_ database: GatewayDatabase) throws {
        try database.put("alpha", body: ["name": .string("Alpha")])
        try database.put("beta", body: ["name": .string("Beta")],
                         attachments: ["note.txt": Attachment(contentType: "text/plain", data: Array("hello".utf8))])
        try database.put("gone", body: ["name": .string("Gone")])
        try database.delete("gone")
        try database.put("alpha", body: ["name": .string("Alpha 2")])
    }

    static func local(_ database: GatewayDatabase) throws {
        try database.put("local-1", body: ["from": .string("the client")])
        try database.put("local-2", body: ["from": .string("the client")],
                         attachments: ["a.txt": Attachment(contentType: "text/plain", data: Array(attachmentText.utf8))])
        try database.put("local-1", body: ["from": .string("the client, edited")])
    }
}

/// Every document of the default collection in `a` has the same current revision, deletion and
/// body in `b`, and both hold the same document IDs.
func sameDocuments(_ a: GatewayDatabase, _ b: GatewayDatabase) -> Bool {
    let ids = a.documentIDs(in: GatewayDatabase.defaultCollection)
    guard !ids.isEmpty, ids == b.documentIDs(in: GatewayDatabase.defaultCollection) else { return false }
    return ids.allSatisfy { id in
        guard let left = a.document(id), let right = b.document(id) else { return false }
        return left.currentRevID == right.currentRevID && left.isDeleted == right.isDeleted && left.body == right.body
    }
}

/// A push-and-pull replication of a local database seeded with ``ReplaySeeds/local`` through a
/// capturing relay to a gateway seeded with ``ReplaySeeds/gateway``: the capture file, and both
/// databases afterwards. The test removes the capture (``remove()``) when done.
struct RecordedReplication: Sendable {
    let capturePath: String
    let gateway: GatewayDatabase
    let local: GatewayDatabase
    let result: ReplicationResult

    /// Deletes the capture's directory.
    func remove() {
        try? FileManager.default.removeItem(atPath: (capturePath as NSString).deletingLastPathComponent)
    }

    static func record(group: EventLoopGroup) async throws -> RecordedReplication {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("replay-\(UUID().uuidString)").path
        var recorded = false
        defer { if !recorded { try? FileManager.default.removeItem(atPath: directory) } }
        let gateway = try await RunningGateway.start(group: group, seed: ReplaySeeds.gateway)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                             port: gateway.server.port)))
        configuration.listenPort = 0
        configuration.captureDirectory = directory
        let relay = RelayServer(configuration: configuration, group: group,
                                logger: Logger(label: "test.relay") { _ in SwiftLogNoOpLogHandler() })
        let address = try await relay.start()
        let local = GatewayDatabase(name: "local")
        try ReplaySeeds.local(local)
        let url = "ws://127.0.0.1:\(try #require(address.port))/db"
        let result = try await Replicator(configuration: ReplicatorConfiguration(url: url, direction: .pushAndPull),
                                          database: local, group: group).run()
        try await relay.shutdown()
        try await gateway.server.stop()
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".blipcap") }
        try #require(files.count == 1, "one capture file per session: \(files)")
        recorded = true
        return RecordedReplication(capturePath: directory + "/" + files[0], gateway: gateway.database,
                                   local: local, result: result)
    }
}
