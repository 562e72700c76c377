import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import Logging
import NIOCore
import Relay
import Replication
import Testing

/// Replicator ↔ relay ↔ gateway on loopback: the relay must be invisible to replication (bodies,
/// tombstones, attachments, conflicts and Basic auth all come out as they do directly) while it
/// decodes and logs every message. `sampleScenarioAsTheDemoRunsIt` runs `blipscope demo`'s steps
/// on the bundled sample documents (the executable target itself cannot be imported by tests).
@Suite struct RelayedReplicationTests {
    @Test func pullThroughTheRelayIsByteEqual() async throws {
        try await withRelayedGateway(seed: ReplicatorTests.seedGateway) { relayed in
            let local = GatewayDatabase(name: "local")
            let result = try await relayed.replicator(.pull, into: local).run()
            #expect(result.pulledRevisions == 3)
            #expect(result.pulledAttachments == 1)
            #expect(result.subprotocol == "BLIP_3+CBMobile_3")
            #expect(documentsMatch(relayed.gateway.database, local))
            #expect(local.document("gone")?.isDeleted == true)
            #expect(local.attachment(digest: GatewayDatabase.attachmentDigest(of: Array("hello".utf8))) != nil)
            await relayed.recorder.waitForClosedSessions(1)
            let seen = relayed.recorder.snapshot
            #expect(seen.requests(.clientToServer).contains("subChanges"))
            #expect(seen.requests(.serverToClient).contains("rev"))
            #expect(seen.requests(.clientToServer).contains("getAttachment"))
            #expect(seen.decodeErrors == 0)
            #expect(relayed.logLines.contains { $0.contains("subChanges") })
        }
    }

    @Test func pushThroughTheRelayIsByteEqual() async throws {
        try await withRelayedGateway { relayed in
            let local = GatewayDatabase(name: "local")
            try ReplicatorTests.seedGateway(local)
            let result = try await relayed.replicator(.push, into: local).run()
            #expect(result.pushedRevisions == 3)
            #expect(result.pushedAttachments == 1)
            #expect(result.conflicts.isEmpty)
            #expect(documentsMatch(local, relayed.gateway.database))
            #expect(relayed.gateway.database.document("gone")?.isDeleted == true)
            #expect(relayed.gateway.database.hasAttachment(digest: GatewayDatabase.attachmentDigest(of: Array("hello".utf8))))
            await relayed.recorder.waitForClosedSessions(1)
            let seen = relayed.recorder.snapshot
            #expect(seen.requests(.clientToServer).contains("rev"))
            #expect(seen.requests(.serverToClient).contains("getAttachment"))
            #expect(seen.decodeErrors == 0)
        }
    }

    @Test func aConflictIsSurfacedThroughTheRelay() async throws {
        try await withRelayedGateway(seed: ReplicatorTests.seedGateway) { relayed in
            let local = GatewayDatabase(name: "local")
            _ = try await relayed.replicator(.pull, into: local).run()
            try local.put("alpha", body: ["name": .string("edited locally")])
            let theirs = try relayed.gateway.database.put("alpha", body: ["name": .string("edited on the server")])
            try local.put("fresh", body: [:])
            let result = try await relayed.replicator(.push, into: local).run()
            #expect(result.conflicts.map(\.docID) == ["alpha"])
            #expect(result.conflicts.first?.side == .push)
            #expect(result.pushedRevisions == 1)
            #expect(relayed.gateway.database.document("alpha")?.currentRevID == theirs)
            #expect(relayed.gateway.database.document("fresh")?.currentRevID == local.document("fresh")?.currentRevID)
            await relayed.recorder.waitForClosedSessions(2)
            // The 409 reached the replicator in the proposeChanges reply the relay decoded.
            let replies = relayed.recorder.snapshot.replies(to: "proposeChanges")
            #expect(replies.contains { String(buffer: $0.body).contains("409") })
        }
    }

    @Test func basicAuthChallengePassesThroughTheRelay() async throws {
        try await withRelayedGateway(configure: { $0.users = ["alice": "secret"] }) { relayed in
            guard case .refused(let status, let headers, _) = try await relayed.dialRelay() else {
                Issue.record("expected the gateway's 401 through the relay")
                return
            }
            #expect(status.code == 401)
            #expect(headers.first(name: "WWW-Authenticate") == "Basic realm=\"Couchbase Sync Gateway\"")

            let anonymous = relayed.replicator(.pull, into: GatewayDatabase(name: "l"))
            let refusal = await #expect(throws: GatewayError.self) { _ = try await anonymous.run() }
            #expect(refusal?.status == 401)

            try relayed.gateway.database.put("private", body: ["for": .string("alice")])
            let local = GatewayDatabase(name: "l")
            let result = try await relayed.replicator(.pull, into: local) {
                $0.username = "alice"
                $0.password = "secret"
            }.run()
            #expect(result.pulledRevisions == 1)
            #expect(documentsMatch(relayed.gateway.database, local))
            await relayed.recorder.waitForClosedSessions(1)
            let seen = relayed.recorder.snapshot
            #expect(seen.refusals.allSatisfy { $0 == 401 })
            #expect(seen.refusals.count >= 2)
            #expect(seen.users == ["alice"])
        }
    }

    /// `blipscope demo`'s steps on `samples/demo-docs.json`: pull everything, then push a new
    /// document with an attachment, a changed one, a deletion and a conflict, all through the relay.
    @Test func sampleScenarioAsTheDemoRunsIt() async throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/demo-docs.json").path
        try await withRelayedGateway(seed: { try SeedData.load(from: samples, into: $0) }) { relayed in
            let upstream = relayed.gateway.database
            let local = GatewayDatabase(name: "local")
            let pull = try await relayed.replicator(.pull, into: local).run()
            #expect(pull.pulledRevisions == upstream.documentCount())
            #expect(pull.pulledAttachments >= 1)
            #expect(documentsMatch(upstream, local))

            let note = Attachment(contentType: "text/plain", data: Array("Pushed through the BlipScope relay.\n".utf8))
            try local.put("demo_note", body: ["type": .string("note")], attachments: ["hello.txt": note])
            try local.put("hotel_02", body: ["type": .string("hotel"), "vacancy": .bool(true)])
            try local.delete("route_BER_FCO")
            try local.put("hotel_03", body: ["stars": .number("4")])
            let theirs = try upstream.put("hotel_03", body: ["stars": .number("5"), "renovated": .bool(true)])
            let push = try await relayed.replicator(.push, into: local).run()
            #expect(push.pushedRevisions == 3)
            #expect(push.pushedAttachments == 1)
            #expect(push.conflicts.map(\.docID) == ["hotel_03"])
            #expect(push.documentErrors.isEmpty)
            for id in ["demo_note", "hotel_02", "route_BER_FCO"] {
                let mine = local.document(id), there = upstream.document(id)
                #expect(mine?.currentRevID == there?.currentRevID, "\(id)")
                #expect(mine?.body == there?.body, "\(id)")
            }
            #expect(upstream.document("route_BER_FCO")?.isDeleted == true)
            #expect(upstream.hasAttachment(digest: GatewayDatabase.attachmentDigest(of: note.data)))
            #expect(upstream.document("hotel_03")?.currentRevID == theirs)
            await relayed.recorder.waitForClosedSessions(2)
            #expect(relayed.recorder.snapshot.decodeErrors == 0)
        }
    }
}

// MARK: - fixture

/// A gateway with a relay in front of it (both on 127.0.0.1, free ports) and what the relay saw.
struct RelayedGateway: Sendable {
    let gateway: GatewayFixture
    let relay: RelayServer
    let relayPort: Int
    let recorder: RelayEventTally
    let log: LineCollector

    /// The database's URL through the relay.
    var url: String { "ws://127.0.0.1:\(relayPort)/\(gateway.database.name)" }
    var logLines: [String] { log.lines }

    func replicator(_ direction: ReplicatorConfiguration.Direction, into local: GatewayDatabase,
                    _ configure: (inout ReplicatorConfiguration) -> Void = { _ in }) -> Replicator {
        var configuration = ReplicatorConfiguration(url: url, direction: direction)
        configure(&configuration)
        return Replicator(configuration: configuration, database: local, group: gateway.group)
    }

    /// Opens a raw BLIP connection to the relay (no replicator, no credentials).
    func dialRelay() async throws -> BLIPWebSocketClient.Outcome {
        var client = BLIPWebSocketClient.Configuration()
        client.host = "127.0.0.1"
        client.port = relayPort
        client.path = "/\(gateway.database.name)/_blipsync"
        client.subprotocols = ["BLIP_3+CBMobile_3"]
        return try await BLIPWebSocketClient.connect(client, group: gateway.group)
    }
}

/// Runs `body` against a fresh gateway (see ``withGateway``) behind a relay logging at info level
/// into memory; stops the relay, then the gateway, all within `timeout`.
func withRelayedGateway(timeout: Duration = .seconds(60),
                        configure: (inout GatewayConfiguration) -> Void = { _ in },
                        seed: (GatewayDatabase) throws -> Void = { _ in },
                        _ body: @escaping @Sendable (RelayedGateway) async throws -> Void) async throws {
    try await withGateway(timeout: timeout, configure: configure, seed: seed) { gateway in
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                             port: gateway.server.port)))
        configuration.listenPort = 0
        let recorder = RelayEventTally()
        let log = LineCollector()
        let relay = RelayServer(configuration: configuration, group: gateway.group,
                                logger: Logger(label: "test.relay") { _ in CollectingLogHandler(collector: log) },
                                observers: [recorder])
        let address = try await relay.start()
        let port = try #require(address.port)
        let relayed = RelayedGateway(gateway: gateway, relay: relay, relayPort: port, recorder: recorder, log: log)
        do {
            try await body(relayed)
        } catch {
            try? await relay.shutdown()
            throw error
        }
        try await relay.shutdown()
    }
}

/// What the relay decoded and decided, recorded from its event stream.
final class RelayEventTally: RelayObserver, @unchecked Sendable {
    struct Seen: Sendable {
        var requestProfiles: [(direction: BLIPDirection, profile: String)] = []
        var replies: [(requestProfile: String?, type: MessageType, body: ByteBuffer)] = []
        var refusals: [Int] = []
        var users: [String?] = []
        var decodeErrors = 0
        var closed = 0

        func requests(_ direction: BLIPDirection) -> Set<String> {
            Set(requestProfiles.filter { $0.direction == direction }.map(\.profile))
        }

        func replies(to profile: String) -> [(requestProfile: String?, type: MessageType, body: ByteBuffer)] {
            replies.filter { $0.requestProfile == profile }
        }
    }

    let interests: RelayEventInterests = [.sessions, .messages]
    private let lock = NSLock()
    private var seen = Seen()
    private var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var nextWaiter: UInt64 = 0

    var snapshot: Seen { lock.withLock { seen } }

    func observe(_ event: RelayEvent) {
        var ready: [CheckedContinuation<Void, Never>] = []
        lock.withLock {
            switch event {
            case .sessionOpened(let info): seen.users.append(info.user)
            case .handshakeRefused(let refusal): seen.refusals.append(Int(refusal.status.code))
            case .message(let message):
                if message.message.type == .request, let profile = message.message.profile {
                    seen.requestProfiles.append((message.direction, profile))
                } else if message.message.type == .response || message.message.type == .error {
                    seen.replies.append((message.requestProfile, message.message.type, message.message.body))
                }
            case .decodeError: seen.decodeErrors += 1
            case .sessionClosed:
                seen.closed += 1
                let closed = seen.closed
                for (id, waiter) in waiters where waiter.count <= closed {
                    ready.append(waiter.continuation)
                    waiters[id] = nil
                }
            default: break
            }
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `count` sessions have closed, or when the task is cancelled (the test's
    /// timeout cancels it), so the wait is always bounded.
    func waitForClosedSessions(_ count: Int) async {
        let id = lock.withLock { () -> UInt64 in
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done: Bool = lock.withLock {
                    if seen.closed >= count || Task.isCancelled { return true }
                    waiters[id] = (count, continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}

/// Log lines kept in memory.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}

/// A swift-log handler at info level that hands each message to a ``LineCollector``.
struct CollectingLogHandler: LogHandler {
    let collector: LineCollector
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { collector.append(event.message.description) }
}
