import BLIPCore
import Foundation
import Gateway
import Logging
import NIOCore
import Policy
import Relay
import Replication
import Testing

/// The relay's policy file applied to real replications (GitHub issue 7): replicator ↔ relay with
/// a policy ↔ gateway on loopback. Each test states a rule, runs the replication a Couchbase Lite
/// client would, and checks what reached each side and what the replicator reported.
@Suite struct PolicyReplicationTests {
    // MARK: read-only

    /// A read-only user's push is refused document by document with 403 and nothing reaches the
    /// gateway; a pull through the same relay still brings every document.
    @Test(arguments: [false, true])
    func readOnlyRefusesThePushAndLetsThePullThrough(proposeChanges: Bool) async throws {
        let policy = """
            rules:
              - name: guests-read-only
                action: readOnly
            """
        try await withPolicyRelay(policy, seed: { try Self.put(["server-1", "server-2", "server-3"], into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            try Self.put(["mine-1", "mine-2"], into: local)
            let push = try await relayed.replicator(.push, into: local) { $0.proposeChanges = proposeChanges }.run()
            #expect(push.pushedRevisions == 0)
            #expect(push.documentErrors.map(\.docID).sorted() == ["mine-1", "mine-2"])
            #expect(push.documentErrors.allSatisfy { $0.status == 403 })
            #expect(relayed.upstream.document("mine-1") == nil)
            #expect(relayed.upstream.document("mine-2") == nil)

            let pull = try await relayed.replicator(.pull, into: local).run()
            #expect(pull.pulledRevisions == 3)
            #expect(pull.documentErrors.isEmpty)
            for id in ["server-1", "server-2", "server-3"] {
                #expect(local.document(id)?.currentRevID == relayed.upstream.document(id)?.currentRevID, "\(id)")
            }
            await relayed.tally.waitForClosedSessions(2)
            let denied = relayed.verdicts.events.filter { $0.action.hasPrefix("deny") }
            #expect(!denied.isEmpty)
            #expect(denied.allSatisfy { $0.rule == "guests-read-only" && $0.direction == .clientToServer })
            #expect(Set(denied.compactMap(\.profile)) == [proposeChanges ? "proposeChanges" : "changes"])
        }
    }

    // MARK: filterChanges

    /// `secret-*` entries are cut out of the gateway's changes; the rest arrive, the replication
    /// completes and its checkpoint reaches the gateway's last sequence.
    @Test func docFilterKeepsSecretsOutOfThePull() async throws {
        let policy = """
            rules:
              - name: hide-secrets
                match: { from: server, profile: changes }
                action: { filterChanges: { doc: "secret-*" } }
            """
        let ids = ["public-1", "secret-1", "public-2", "secret-2", "secret-3", "public-3"]
        try await withPolicyRelay(policy, seed: { try Self.put(ids, into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            let pull = try await relayed.replicator(.pull, into: local) { $0.checkpointID = "filtered" }.run()
            #expect(pull.pulledRevisions == 3)
            #expect(local.documentIDs().sorted() == ["public-1", "public-2", "public-3"])
            let checkpoint = relayed.upstream.checkpoint(client: "filtered")
            #expect(checkpoint?.body.objectValue?["remote"]?.description == String(relayed.upstream.lastSequence))

            // Caught up: a second run has nothing to pull and still completes.
            let again = try await relayed.replicator(.pull, into: local) { $0.checkpointID = "filtered" }.run()
            #expect(again.pulledRevisions == 0)
            await relayed.tally.waitForClosedSessions(2)
            #expect(relayed.tally.snapshot.decodeErrors == 0)
        }
    }

    /// A secret whose changes entry is the last of the feed: the whole batch may become empty
    /// for the client, yet the pull completes.
    @Test func docFilterOnlySecretsLeftStillCompletes() async throws {
        let policy = """
            rules:
              - name: hide-secrets
                match: { from: server, profile: changes }
                action: { filterChanges: { doc: "secret-*" } }
            """
        try await withPolicyRelay(policy, seed: { try Self.put(["secret-1", "secret-2"], into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            let pull = try await relayed.replicator(.pull, into: local).run()
            #expect(pull.pulledRevisions == 0)
            #expect(local.documentCount() == 0)
        }
    }

    /// The client's own changes/proposeChanges lose their `secret-*` entries: those are answered
    /// as not wanted (so they count as skipped) and the others are pushed.
    @Test(arguments: [false, true])
    func docFilterKeepsSecretsOutOfThePush(proposeChanges: Bool) async throws {
        let policy = """
            rules:
              - name: keep-secrets-local
                match: { from: client, profile: [changes, proposeChanges] }
                action: { filterChanges: { doc: "secret-*" } }
            """
        try await withPolicyRelay(policy) { relayed in
            let local = GatewayDatabase(name: "local")
            try Self.put(["note-1", "secret-1", "note-2", "secret-2"], into: local)
            let push = try await relayed.replicator(.push, into: local) { $0.proposeChanges = proposeChanges }.run()
            #expect(push.pushedRevisions == 2)
            #expect(push.skippedRevisions == 2)
            #expect(push.documentErrors.isEmpty)
            #expect(relayed.upstream.documentIDs().sorted() == ["note-1", "note-2"])
            #expect(relayed.upstream.document("note-1")?.currentRevID == local.document("note-1")?.currentRevID)
        }
    }

    // MARK: denied revisions

    /// The gateway's revs of `secret-*` are denied on their way to the client: the client is sent
    /// a norev for each in its place, so the one-shot pull completes with the others and reports
    /// the withheld ones with the rule's status, as LiteCore would.
    @Test func deniedRevsOfAPullReachTheClientAsNorevAndThePullCompletes() async throws {
        let policy = """
            rules:
              - name: no-secrets
                match: { from: server, profile: rev, doc: "secret-*" }
                action: { deny: { code: 403, message: "secret" } }
            """
        let ids = ["public-1", "secret-1", "public-2", "secret-2", "public-3"]
        try await withPolicyRelay(policy, seed: { try Self.put(ids, into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            let pull = try await relayed.replicator(.pull, into: local).run()
            #expect(pull.pulledRevisions == 3)
            #expect(local.documentIDs().sorted() == ["public-1", "public-2", "public-3"])
            #expect(pull.documentErrors.map(\.docID).sorted() == ["secret-1", "secret-2"])
            #expect(pull.documentErrors.allSatisfy { $0.status == 403 }, "\(pull.documentErrors)")
            await relayed.tally.waitForClosedSessions(1)
            #expect(relayed.tally.snapshot.decodeErrors == 0)
            // The gateway sends revs without attachments NoReply, as Sync Gateway does: no ERR goes back.
            #expect(relayed.verdicts.events.filter { $0.action == "deny 403 (no ERR) + norev" }.count == 2)
        }
    }

    /// The client's revs of `secret-*` are denied on their way to the gateway: the client gets 403
    /// for each, the gateway a norev, and the other documents arrive.
    @Test func deniedRevsOfAPushReachTheGatewayAsNorev() async throws {
        let policy = """
            rules:
              - name: no-secrets
                match: { from: client, profile: rev, doc: "secret-*" }
                action: { deny: { code: 403, message: "secret" } }
            """
        try await withPolicyRelay(policy) { relayed in
            let local = GatewayDatabase(name: "local")
            try Self.put(["note-1", "secret-1", "note-2"], into: local)
            let push = try await relayed.replicator(.push, into: local) { $0.proposeChanges = true }.run()
            #expect(push.pushedRevisions == 2)
            #expect(push.documentErrors.map(\.docID) == ["secret-1"])
            #expect(push.documentErrors.first?.status == 403)
            #expect(relayed.upstream.documentIDs().sorted() == ["note-1", "note-2"])
            await relayed.tally.waitForClosedSessions(1)
            let received = relayed.relayed.log.lines.filter { $0.contains("norev") }
            #expect(!received.isEmpty, "the relay's log shows the norev it sent the gateway")
        }
    }

    // MARK: blobs

    /// Couchbase Lite 3.x documents carry attachments as blob dictionaries: an `attachment:` rule
    /// sees them, the big PNG is refused with the rule's 413, and the small blob's document
    /// arrives with its blob fetched by the gateway through getAttachment.
    @Test func attachmentRulesSeeLiteCoreBlobs() async throws {
        let policy = """
            rules:
              - name: no-big-images
                match: { from: client, type: request, profile: rev, attachment: { contentType: "image/*", minSize: 1MB } }
                action: { deny: { code: 413, message: "images over 1 MB stay local" } }
            """
        try await withPolicyRelay(policy) { relayed in
            let local = GatewayDatabase(name: "local")
            for (id, size) in [("big-photo", 1_200_000), ("thumbnail", 2_000)] {
                let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                let digest = local.storeAttachment(data)
                _ = try local.put(id, body: ["photo": .object(["@type": .string("blob"), "digest": .string(digest),
                                                               "length": .number(String(size)),
                                                               "content_type": .string("image/png")])])
            }
            let push = try await relayed.replicator(.push, into: local) { $0.proposeChanges = true }.run()
            #expect(push.pushedRevisions == 1)
            #expect(push.documentErrors.map(\.docID) == ["big-photo"])
            #expect(push.documentErrors.first?.status == 413)
            #expect(relayed.upstream.documentIDs() == ["thumbnail"])
            let thumbnail = try #require(relayed.upstream.document("thumbnail").flatMap { JSONValue(parsing: $0.body) })
            let digest = try #require(DocumentBlobs.references(in: thumbnail).first?.digest)
            #expect(relayed.upstream.hasAttachment(digest: digest), "the gateway asked for the blob with getAttachment")
        }
    }

    // MARK: rateLimit

    /// A small bucket on the gateway's revs delays all but its burst (reported as verdicts) and
    /// every document still arrives. The policy's clock stands still, so the bucket never refills
    /// however slowly a loaded machine passes the revs along: the delays are exact.
    @Test func rateLimitDelaysRevsAndThePullCompletes() async throws {
        let policy = """
            rules:
              - name: slow-revs
                match: { from: server, profile: rev }
                action: { rateLimit: { perSecond: 20, burst: 2, key: session, onExceed: delay } }
            """
        let ids = (1...8).map { "doc-\($0)" }
        let instant = PolicyClock.now()
        try await withPolicyRelay(policy, clock: { instant }, seed: { try Self.put(ids, into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            let pull = try await relayed.replicator(.pull, into: local).run()
            #expect(pull.pulledRevisions == ids.count)
            #expect(documentsMatch(relayed.upstream, local))
            await relayed.tally.waitForClosedSessions(1)
            let delays = relayed.verdicts.events.filter { $0.action.hasPrefix("delay") }
            // Eight revs through a bucket of two that never refills at 20/s: the first two pass,
            // each later one waits a twentieth of a second longer than the one before it.
            #expect(delays.map(\.action) == (1...6).map { "delay \($0 * 50)ms" })
            #expect(delays.allSatisfy { $0.rule == "slow-revs" && $0.profile == "rev" && $0.direction == .serverToClient })
            #expect(relayed.verdicts.events.allSatisfy { $0.metricAction == "delay" })
        }
    }

    // MARK: close faults

    /// The relay cuts the session after the gateway's second rev with the rule's code; the
    /// replicator reports that code and reads it as Couchbase Lite does (§7).
    @Test(arguments: [(UInt16(4001), PeerCloseReaction.transient), (4002, .permanent), (1006, .transient),
                      (1001, .goingAway)])
    func closeFaultEndsThePullWithItsCode(code: UInt16, reaction: PeerCloseReaction) async throws {
        let policy = """
            rules:
              - name: cut
                match: { from: server, profile: rev }
                action: { close: { code: \(code), reason: "injected", afterMessages: 2 } }
            """
        let ids = (1...30).map { "doc-\($0)" }
        try await withPolicyRelay(policy, seed: { try Self.put(ids, into: $0) }) { relayed in
            let local = GatewayDatabase(name: "local")
            let error = await #expect(throws: GatewayError.self) {
                _ = try await relayed.replicator(.pull, into: local).run()
            }
            #expect(error?.closeCode == code)
            #expect(error?.closeReaction == reaction)
            #expect(local.documentCount() >= 2)
            #expect(local.documentCount() < ids.count)
            await relayed.tally.waitForClosedSessions(1)
            #expect(relayed.verdicts.events.contains { $0.rule == "cut" && $0.action.hasPrefix("close") })
        }
    }

    /// A push cut after its first rev ends with the code too (no request is left waiting).
    @Test func closeFaultEndsThePush() async throws {
        let policy = """
            rules:
              - name: cut-push
                match: { from: client, profile: rev }
                action: { close: { code: 4001, afterMessages: 1 } }
            """
        try await withPolicyRelay(policy) { relayed in
            let local = GatewayDatabase(name: "local")
            try Self.put((1...20).map { "doc-\($0)" }, into: local)
            let error = await #expect(throws: GatewayError.self) {
                _ = try await relayed.replicator(.push, into: local).run()
            }
            #expect(error?.closeCode == 4001)
            #expect(error?.closeReaction == .transient)
            #expect(relayed.upstream.documentCount() < 20)
        }
    }

    /// Once the peer has closed, a request fails at once instead of waiting for a reply that can
    /// never come (what kept a pusher waiting after a policy close).
    @Test func aRequestAfterThePeerClosedFailsAtOnce() async throws {
        try await withGateway { gateway in
            let connection = try #require(try await gateway.dial().connection)
            try await connection.close(code: 1000, reason: "")
            _ = try await connection.closed.get()
            await #expect(throws: (any Error).self) {
                _ = try await connection.request(.request(profile: "getCheckpoint", properties: ["client": "x"]))
            }
        }
    }

    // MARK: deny

    /// Drafts are refused with 403 one by one; the other documents are pushed.
    @Test(arguments: [false, true])
    func denyDraftsPushesTheRest(proposeChanges: Bool) async throws {
        let policy = """
            rules:
              - name: no-drafts
                match: { from: client, profile: rev, doc: "draft-*" }
                action: { deny: { domain: HTTP, code: 403, message: "drafts stay on the device" } }
            """
        try await withPolicyRelay(policy) { relayed in
            let local = GatewayDatabase(name: "local")
            try Self.put(["draft-1", "note-1", "draft-2", "note-2", "note-3"], into: local)
            let push = try await relayed.replicator(.push, into: local) { $0.proposeChanges = proposeChanges }.run()
            #expect(push.pushedRevisions == 3)
            #expect(push.documentErrors.map(\.docID).sorted() == ["draft-1", "draft-2"])
            #expect(push.documentErrors.allSatisfy { $0.status == 403 && $0.reason.contains("drafts stay on the device") })
            #expect(relayed.upstream.documentIDs().sorted() == ["note-1", "note-2", "note-3"])
            await relayed.tally.waitForClosedSessions(1)
            let denied = relayed.verdicts.events.filter { $0.action.hasPrefix("deny") }
            #expect(denied.count == 2)
            #expect(denied.allSatisfy { $0.rule == "no-drafts" && $0.profile == "rev" })
            #expect(relayed.tally.snapshot.decodeErrors == 0)
        }
    }

    // MARK: helpers

    static func put(_ ids: [String], into database: GatewayDatabase) throws {
        for id in ids { try database.put(id, body: ["id": .string(id)]) }
    }
}

/// How Couchbase Lite reads a close it receives (wire-format reference §7), without sockets.
@Suite struct PeerCloseReactionTests {
    @Test func closeCodes() {
        #expect(PeerCloseReaction(closeCode: 1000) == .goingAway)
        #expect(PeerCloseReaction(closeCode: 1001) == .goingAway)
        #expect(PeerCloseReaction(closeCode: 1006) == .transient)
        #expect(PeerCloseReaction(closeCode: 4001) == .transient)
        for code: UInt16 in [1002, 1008, 1009, 1011, 4002, 4999] {
            #expect(PeerCloseReaction(closeCode: code) == .permanent, "\(code)")
        }
    }

    @Test func httpStatuses() {
        for status in [408, 429, 502, 503, 504] {
            #expect(PeerCloseReaction(httpStatus: status) == .transient, "\(status)")
        }
        for status in [400, 401, 403, 404, 409, 500, 501] {
            #expect(PeerCloseReaction(httpStatus: status) == .permanent, "\(status)")
        }
        #expect(!PeerCloseReaction.permanent.isRetried)
        #expect(PeerCloseReaction.transient.isRetried)
    }
}

// MARK: - fixture

/// A relay in front of a gateway with `policy` in force, and the verdicts it reported.
struct PolicyRelayedGateway: Sendable {
    let relayed: RelayedGateway
    let verdicts: VerdictLog

    var upstream: GatewayDatabase { relayed.gateway.database }
    var tally: RelayEventTally { relayed.recorder }

    func replicator(_ direction: ReplicatorConfiguration.Direction, into local: GatewayDatabase,
                    _ configure: (inout ReplicatorConfiguration) -> Void = { _ in }) -> Replicator {
        relayed.replicator(direction, into: local, configure)
    }
}

/// Runs `body` against a fresh gateway behind a relay enforcing the policy file `yaml`; stops
/// the relay, then the gateway, all within `timeout`.
func withPolicyRelay(_ yaml: String, timeout: Duration = .seconds(60),
                     clock: @escaping @Sendable () -> UInt64 = PolicyClock.now,
                     seed: (GatewayDatabase) throws -> Void = { _ in },
                     _ body: @escaping @Sendable (PolicyRelayedGateway) async throws -> Void) async throws {
    let document = try PolicyDocument(yaml: yaml)
    try await withGateway(timeout: timeout, seed: seed) { gateway in
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                             port: gateway.server.port)))
        configuration.listenPort = 0
        configuration.policy = PolicyStore(document: document)
        configuration.policyClock = clock
        let recorder = RelayEventTally()
        let verdicts = VerdictLog()
        let log = LineCollector()
        let relay = RelayServer(configuration: configuration, group: gateway.group,
                                logger: Logger(label: "test.relay") { _ in CollectingLogHandler(collector: log) },
                                observers: [recorder, verdicts])
        let address = try await relay.start()
        let port = try #require(address.port)
        let relayed = RelayedGateway(gateway: gateway, relay: relay, relayPort: port, recorder: recorder, log: log)
        do {
            try await body(PolicyRelayedGateway(relayed: relayed, verdicts: verdicts))
        } catch {
            try? await relay.shutdown()
            throw error
        }
        try await relay.shutdown()
    }
}

/// Every ``RelayEvent/verdict(_:)`` the relay reported, in order.
final class VerdictLog: RelayObserver, @unchecked Sendable {
    let interests: RelayEventInterests = [.messages]
    private let lock = NSLock()
    private var stored: [VerdictEvent] = []

    func observe(_ event: RelayEvent) {
        guard case .verdict(let verdict) = event else { return }
        lock.withLock { stored.append(verdict) }
    }

    var events: [VerdictEvent] { lock.withLock { stored } }
}
