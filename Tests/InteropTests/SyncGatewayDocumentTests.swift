import BLIPTestSupport
import Foundation
import Gateway
import NIOPosix
import Relay
import Replication
import Testing

/// Documents' lives between Couchbase Lite (cblite) and a real Sync Gateway (3.2 and 4.1):
/// blobs both ways, purges on either side, conflicts, a continuous push. Each runs directly and
/// through the relay; the relayed run must end as the direct one, and the relay's account
/// (summary, findings, a document's timeline) must equal what SG and the client hold.
/// Opt-in, as ``SyncGatewayTests``.
@Suite(.serialized, .enabled(if: SyncGateway.anyAvailable && CBLite.available,
                             "set BLIPSCOPE_SYNC_GATEWAY or BLIPSCOPE_SYNC_GATEWAY4, and BLIPSCOPE_CBLITE"))
struct SyncGatewayDocumentTests {
    /// A relay in front of `gateway` (capturing into `capture` if given), and its URL.
    struct Relayed {
        let group: MultiThreadedEventLoopGroup
        let relay: RelayServer
        let url: String
        let events: EventCounter

        init(to gateway: SyncGateway, capture: String? = nil) async throws {
            (group, relay, url, events) = try await SyncGatewayTests.relay(to: gateway, capture: capture)
        }

        func shutdown() async throws {
            try await relay.shutdown()
            try await group.shutdownGracefully()
        }

        /// The analyzer's account of each session, once `count` sessions have closed.
        func summaries(_ count: Int) async -> [ReplicationSummary] {
            await events.wait { $0.summaries.count >= count }
            return events.summaries.compactMap(\.replication)
        }
    }

    /// Bytes that differ with `seed`, as a file's would.
    static func bytes(_ count: Int, seed: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 2_654_435_761 >> (11 + seed % 5)) })
    }

    static func findings(_ summary: ReplicationSummary) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: summary.findings.map { ($0.kind.rawValue, $0.occurrences) })
    }

    // MARK: Blobs

    /// What one pull of blobs, then one push of them, ended with.
    struct BlobOutcome: Equatable {
        var pullStatus: Int32
        var pulled: String
        var clientDocuments: [String: String]
        var clientBlobs: Int
        var pushStatus: Int32
        var pushed: String
        var gatewayDocuments: [String: String]
    }

    /// Documents written through SG's REST API with attachments (one of 2 MB), and one whose
    /// body names a blob SG does not hold as its attachment (a blob dictionary copied from
    /// elsewhere): SG sends that one NoReply, allows no getAttachment for it, and refuses
    /// LiteCore's with 403, so LiteCore does not store it; `mixed` has an attachment as well,
    /// so SG awaits its reply, which is LiteCore's refusal.
    static let attachments: [String: [String: (contentType: String, data: Data)]] = [
        "photo-0": ["photo.png": ("image/png", bytes(100_000, seed: 1))],
        "photo-1": ["photo.png": ("image/png", bytes(60_000, seed: 2))],
        "photo-2": ["photo.png": ("image/png", bytes(2_000_000, seed: 3))],
        "album": ["a.png": ("image/png", bytes(30_000, seed: 4)), "notes.txt": ("text/plain", Data(String(repeating: "notes ", count: 500).utf8))],
    ]
    static var unheldBlob: [String: Any] { ["@type": "blob", "digest": GatewayDatabase.attachmentDigest(of: bytes(4_000, seed: 9)),
                                            "length": 4_000, "content_type": "image/png"] }

    static func writeBlobDocuments(to gateway: SyncGateway) async throws {
        for (id, attachments) in Self.attachments {
            let written = try await gateway.put(id, ["kind": "photo"], attachments: attachments)
            #expect(written.status == 201, "\(written)")
        }
        for index in 0..<5 { try await gateway.put("plain-\(index)", ["n": index]) }
        try await gateway.put("unheld", ["kind": "copy", "photo": unheldBlob])
        try await gateway.put("mixed", ["kind": "copy", "photo": unheldBlob],
                              attachments: ["a.txt": ("text/plain", Data("hello".utf8))])
    }

    /// LiteCore pulls the documents and their blobs from `source` (`pullURL`), then pushes them,
    /// and one it wrote itself with a blob (`cblite put`), to `target` (`pushURL`).
    static func pullThenPushBlobs(_ cblite: CBLite, pullURL: String, target: SyncGateway, pushURL: String,
                                  tag: String) async throws -> BlobOutcome {
        let local = try cblite.database("blobs-\(tag)")
        let pulled = try cblite.run(["pull", local, pullURL])
        let clientDocuments = try cblite.revisions(local)
        let clientBlobs = cblite.blobCount(local)
        let data = bytes(5_000, seed: 7)
        let blob = try cblite.writeBlob(data, into: local, digest: GatewayDatabase.attachmentDigest(of: data), contentType: "image/png")
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["photo": blob]), as: UTF8.self)
        _ = try cblite.run(["put", local, "client-blob", body])
        let pushed = try cblite.run(["push", local, pushURL])
        // LiteCore's revision ID of a document it wrote hashes the body as the database encodes
        // it, which depends on the order the pull stored the others in: not compared.
        var gatewayDocuments = try await target.revisions()
        gatewayDocuments["client-blob"] = gatewayDocuments["client-blob"].map { String($0.prefix(2)) }
        return BlobOutcome(pullStatus: pulled.status, pulled: SyncGatewayTests.completed(pulled.output),
                           clientDocuments: clientDocuments, clientBlobs: clientBlobs, pushStatus: pushed.status,
                           pushed: SyncGatewayTests.completed(pushed.output), gatewayDocuments: gatewayDocuments)
    }

    @Test(arguments: SyncGateway.binaries)
    func blobsTravelBothWaysAndAnUnheldBlobIsRefused(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let source = try await SyncGateway(binary: binary)
        let direct = try await SyncGateway(binary: binary)
        let target = try await SyncGateway(binary: binary)
        defer { source.cleanUp(); direct.cleanUp(); target.cleanUp() }
        try await Self.writeBlobDocuments(to: source)
        let capture = cblite.directory.appendingPathComponent("capture").path
        let pulling = try await Relayed(to: source, capture: capture)
        let pushing = try await Relayed(to: target)

        let truth = try await Self.pullThenPushBlobs(cblite, pullURL: source.url, target: direct, pushURL: direct.url, tag: "direct")
        let seen = try await Self.pullThenPushBlobs(cblite, pullURL: pulling.url, target: target, pushURL: pushing.url, tag: "relayed")
        #expect(seen == truth)
        // What LiteCore stored: every document but the two naming a blob SG would not give.
        let refused: Set = ["unheld", "mixed"]
        let all = try await source.revisions()
        #expect(Set(truth.clientDocuments.keys) == Set(all.keys).subtracting(refused), "\(truth.clientDocuments.keys.sorted())")
        #expect(truth.clientBlobs == 5 && truth.pullStatus == 0 && truth.pushStatus == 0, "\(truth)")
        // What SG stored: each attachment, byte for byte; the blob cblite's `put` wrote went as a
        // bare reference (cblite does not mark such a document as having attachments).
        #expect(Set(truth.gatewayDocuments.keys) == Set(truth.clientDocuments.keys).union(["client-blob"]))
        for (id, attachments) in Self.attachments {
            for (name, attachment) in attachments {
                #expect(try await target.attachment(id, name) == attachment.data, "\(id)/\(name)")
            }
        }
        let bare = try await target.raw("client-blob")
        #expect((bare?["_sync"] as? [String: Any])?["attachments"] == nil, "\(bare ?? [:])")

        let pull = try #require(await pulling.summaries(1).first)
        #expect(pull.pulled.documents == truth.clientDocuments.count, "the documents LiteCore stored")
        #expect(pull.pulled.attachmentsSent == truth.clientBlobs, "the blobs LiteCore fetched")
        // `unheld` (NoReply) is marked not stored; `mixed` awaited its reply, LiteCore's 403.
        #expect(pull.pulled.revisionsNotStored == 1 && pull.pulled.revisionsRefused == 1, "\(pull.pulled)")
        #expect(pull.pulled.revisionsSent == all.count)
        #expect(pull.errorsByDomainAndCode["HTTP 403"] == 3, "SG's two refusals and LiteCore's: \(pull.errorsByDomainAndCode)")
        #expect(Self.findings(pull) == ["revisionNotStored": 1], "\(pull.findings)")
        #expect(pull.protocolViolations == 0 && pull.pullCaughtUp == true)
        let push = try #require(await pushing.summaries(1).first)
        #expect(push.pushed.documents == truth.gatewayDocuments.count, "the documents SG stored")
        #expect(push.pushed.attachmentsSent == truth.clientBlobs, "the blobs SG fetched")
        #expect(push.protocolViolations == 0 && push.findings.isEmpty, "\(push.findings)")
        #expect(pulling.events.decodeErrors == 0 && pushing.events.decodeErrors == 0)
        try await pulling.shutdown()
        try await pushing.shutdown()

        // The refused document's timeline says so, with SG's reason.
        let inspected = try await BlipscopeExecutable.run(["inspect", capture, "--doc", "unheld"])
        #expect(inspected.status == 0, "\(inspected.errors)")
        let notStored = inspected.output.split(separator: "\n").filter { $0.contains("revNotStored") }
        #expect(notStored.count == 1 && notStored[0].contains("Attachment's doc not being synced"), "\(inspected.output)")
    }

    // MARK: Purges

    /// What a run of pushes and a pull around purges ended with.
    struct ReplicationOutcome: Equatable {
        var statuses: [Int32]
        var completed: [String]
        var clientDocuments: [String: String]
        var gatewayDocuments: [String: String]
    }

    /// What changed between two listings (id → revision): the documents a replication stored.
    static func changed(_ before: [String: String], _ after: [String: String]) -> Set<String> {
        Set(after.filter { before[$0.key] != $0.value }.keys)
    }

    /// The client pushes twenty documents; SG purges five and the client three (deleted, then
    /// purged before the deletion was pushed); the client changes one SG purged and pushes; SG
    /// changes one the client purged; the client pulls. Returns the outcome and, per
    /// replication, the documents the receiver stored (read from SG and the client).
    static func purgeOnBothSides(_ cblite: CBLite, url: String, gateway: SyncGateway, tag: String)
        async throws -> (outcome: ReplicationOutcome, stored: [Set<String>]) {
        let local = try cblite.database("purge-\(tag)", holding: (0..<20).map { ["_id": String(format: "d%02d", $0), "n": $0] })
        var runs: [CBLite.Result] = []
        var stored: [Set<String>] = []
        var before = try await gateway.revisions()
        runs.append(try cblite.run(["push", local, url]))
        stored.append(changed(before, try await gateway.revisions()))

        try await gateway.purge(["d00", "d01", "d02", "d03", "d04"])
        try cblite.purge(["d05", "d06", "d07"], from: local)
        _ = try cblite.run(["put", local, "d00", #"{"n": 100}"#])
        _ = try cblite.run(["put", local, "d10", #"{"n": 110}"#])
        before = try await gateway.revisions()
        runs.append(try cblite.run(["push", local, url]))
        stored.append(changed(before, try await gateway.revisions()))

        let d06 = try #require(try await gateway.revisions()["d06"])
        try await gateway.put("d06", ["n": 106], rev: d06)
        let held = try cblite.revisions(local)
        runs.append(try cblite.run(["pull", local, url]))
        let clientDocuments = try cblite.revisions(local)
        stored.append(changed(held, clientDocuments))
        let outcome = ReplicationOutcome(statuses: runs.map(\.status), completed: runs.map { SyncGatewayTests.completed($0.output) },
                                         clientDocuments: clientDocuments, gatewayDocuments: try await gateway.revisions())
        return (outcome, stored)
    }

    @Test(arguments: SyncGateway.binaries)
    func purgesOnEitherSideThenPushAndPull(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: binary)
        let gateway = try await SyncGateway(binary: binary)
        defer { direct.cleanUp(); gateway.cleanUp() }
        let relayed = try await Relayed(to: gateway)
        let truth = try await Self.purgeOnBothSides(cblite, url: direct.url, gateway: direct, tag: "direct")
        let seen = try await Self.purgeOnBothSides(cblite, url: relayed.url, gateway: gateway, tag: "relayed")
        #expect(seen.outcome == truth.outcome)
        #expect(seen.stored == truth.stored)
        #expect(truth.outcome.statuses == [0, 0, 0], "\(truth.outcome)")
        // SG forgot what it purged, the client kept it; the client got back what it purged.
        #expect(Set(truth.outcome.gatewayDocuments.keys) == Set((0..<20).map { String(format: "d%02d", $0) }).subtracting(["d01", "d02", "d03", "d04"]))
        #expect(truth.outcome.clientDocuments.count == 20, "\(truth.outcome.clientDocuments)")
        #expect(truth.stored[2] == ["d05", "d06", "d07"], "\(truth.stored)")

        let summaries = await relayed.summaries(3)
        #expect(summaries.map(\.pushed.documents) == [truth.stored[0].count, truth.stored[1].count, 0])
        #expect(summaries[2].pulled.documents == truth.stored[2].count)
        #expect(summaries.allSatisfy { $0.protocolViolations == 0 && $0.findings.isEmpty }, "\(summaries.map(\.findings))")
        #expect(relayed.events.decodeErrors == 0)
        try await relayed.shutdown()
    }

    // MARK: Conflicts

    /// The client pushes ten documents; then it changes five and SG (REST) four, three of them
    /// the same; the client pushes (SG refuses the three with 409), pulls (LiteCore stores SG's
    /// revisions as conflicting branches: cblite has no resolver), and pushes again.
    static func conflicts(_ cblite: CBLite, url: String, gateway: SyncGateway, tag: String, vectors: Bool = false)
        async throws -> (outcome: ReplicationOutcome, stored: [Set<String>]) {
        let ids = (0..<10).map { "c\($0)" }
        let local: String
        if vectors {
            local = try cblite.vectorDatabase("conflict-\(tag)")
            try cblite.put(ids.map { ["_id": $0, "v": "start"] }, into: local)
        } else {
            local = try cblite.database("conflict-\(tag)", holding: ids.map { ["_id": $0, "v": "start"] })
        }
        var runs = [try cblite.run(["push", local, url])]
        for id in ids[0..<5] { _ = try cblite.run(["put", local, id, #"{"v": "client"}"#]) }
        let current = try await gateway.revisions()
        for id in ["c0", "c1", "c2", "c5"] { try await gateway.put(id, ["v": "server"], rev: current[id]) }
        var stored: [Set<String>] = []
        var before = try await gateway.revisions()
        runs.append(try cblite.run(["push", local, url]))
        stored.append(changed(before, try await gateway.revisions()))
        let held = try cblite.revisions(local)
        runs.append(try cblite.run(["pull", local, url]))
        let clientDocuments = try cblite.revisions(local)
        stored.append(changed(held, clientDocuments))
        before = try await gateway.revisions()
        runs.append(try cblite.run(["push", local, url]))
        stored.append(changed(before, try await gateway.revisions()))
        let outcome = ReplicationOutcome(statuses: runs.map(\.status), completed: runs.map { SyncGatewayTests.completed($0.output) },
                                         clientDocuments: clientDocuments, gatewayDocuments: try await gateway.revisions())
        return (outcome, stored)
    }

    @Test(arguments: SyncGateway.binaries)
    func aDocumentChangedOnBothSidesConflicts(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: binary)
        let gateway = try await SyncGateway(binary: binary)
        defer { direct.cleanUp(); gateway.cleanUp() }
        let relayed = try await Relayed(to: gateway)
        let truth = try await Self.conflicts(cblite, url: direct.url, gateway: direct, tag: "direct")
        let seen = try await Self.conflicts(cblite, url: relayed.url, gateway: gateway, tag: "relayed")
        #expect(seen.outcome == truth.outcome)
        #expect(seen.stored == truth.stored)
        #expect(truth.outcome.statuses == [0, 0, 0, 0], "\(truth.outcome)")
        #expect(truth.stored[0] == ["c3", "c4"], "SG took the client's changes but the three it had changed too: \(truth.stored)")
        let conflicted = truth.outcome.clientDocuments.filter { $0.value.hasSuffix("-c-") }.keys.sorted()
        #expect(conflicted == ["c0", "c1", "c2"], "\(truth.outcome.clientDocuments)")

        let summaries = await relayed.summaries(4)
        // Push, push, pull, push.
        #expect(summaries.map(\.pushed.documents) == [10, truth.stored[0].count, 0, truth.stored[2].count])
        #expect(summaries[1].conflicts == 3 && summaries[1].pushed.revisionsRefused == 3, "SG's 409s: \(summaries[1])")
        #expect(summaries[2].pulled.documents == truth.stored[1].count, "what the client stored, conflicting branches included")
        #expect(summaries.allSatisfy { $0.protocolViolations == 0 && $0.findings.isEmpty }, "\(summaries.map(\.findings))")
        #expect(relayed.events.decodeErrors == 0)
        try await relayed.shutdown()
    }

    /// The same with LiteCore 4 (version vectors) and Sync Gateway 4.1 over CBMobile_4. Versions
    /// carry their writer's clock, so the runs are compared by which documents changed and which
    /// are conflicted, not by version.
    @Test(.enabled(if: SyncGateway.available(SyncGateway.path4) && CBLite.available4, "needs BLIPSCOPE_SYNC_GATEWAY4 and BLIPSCOPE_CBLITE4"))
    func aDocumentChangedOnBothSidesWithVersionVectors() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: SyncGateway.path4!)
        let gateway = try await SyncGateway(binary: SyncGateway.path4!)
        defer { direct.cleanUp(); gateway.cleanUp() }
        let relayed = try await Relayed(to: gateway)
        let truth = try await Self.conflicts(cblite, url: direct.url, gateway: direct, tag: "direct", vectors: true)
        let seen = try await Self.conflicts(cblite, url: relayed.url, gateway: gateway, tag: "relayed", vectors: true)
        func shape(_ run: (outcome: ReplicationOutcome, stored: [Set<String>])) -> [String] {
            [run.outcome.statuses.map(String.init).joined(separator: ","), run.outcome.completed.joined(separator: ",")]
                + run.outcome.clientDocuments.map { "\($0.key) \($0.value.suffix(3))" }.sorted()
                + run.outcome.gatewayDocuments.keys.sorted() + run.stored.map { $0.sorted().joined(separator: ",") }
        }
        #expect(shape(seen) == shape(truth))
        #expect(truth.outcome.statuses == [0, 0, 0, 0], "\(truth.outcome)")
        let summaries = await relayed.summaries(4)
        for summary in relayed.events.summaries { #expect(summary.info.subprotocol == "BLIP_3+CBMobile_4") }
        #expect(summaries.map(\.pushed.documents) == [10, truth.stored[0].count, 0, truth.stored[2].count], "\(truth.stored)")
        #expect(summaries[2].pulled.documents == truth.stored[1].count)
        #expect(summaries[1].conflicts == 3 && summaries[1].pushed.revisionsRefused == 3, "SG's 409s")
        #expect(summaries.allSatisfy { $0.protocolViolations == 0 && $0.findings.isEmpty }, "\(summaries.map(\.findings))")
        #expect(relayed.events.decodeErrors == 0)
        try await relayed.shutdown()
    }

    // MARK: Continuous push

    /// cblite's shell on a database pulled from SG (`openremote --bidi --continuous`), its
    /// replicator left running; documents `put` in the shell reach SG while it runs. (A
    /// `push --continuous` does not see documents another process writes: LiteCore observes
    /// only its own process's changes.) Returns SG's documents and what the shell printed.
    static func continuousPush(_ cblite: CBLite, url: String, gateway: SyncGateway) async throws -> (documents: [String], status: Int32) {
        let shell = try cblite.shell(["openremote", "--bidi", "--continuous", url])
        for _ in 0..<600 where !shell.output.contains("Replicator will remain active") {
            try await Task.sleep(for: .milliseconds(100))
        }
        let ids = (0..<5).map { "live-\($0)" }
        for (index, id) in ids.enumerated() { shell.send("put \(id) {\"n\": \(index)}") }
        for _ in 0..<600 where !Set(try await gateway.documentIDs()).isSuperset(of: ids) {
            try await Task.sleep(for: .milliseconds(100))
        }
        shell.send("quit")
        let ended = try shell.finish(within: 60)
        return (try await gateway.documentIDs(), ended.status)
    }

    @Test(arguments: SyncGateway.binaries)
    func aContinuousPushSendsDocumentsWrittenWhileItRuns(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: binary)
        let gateway = try await SyncGateway(binary: binary)
        defer { direct.cleanUp(); gateway.cleanUp() }
        for target in [direct, gateway] { try await target.put([["_id": "first", "n": 0]]) }
        let relayed = try await Relayed(to: gateway)
        let truth = try await Self.continuousPush(cblite, url: direct.url, gateway: direct)
        let seen = try await Self.continuousPush(cblite, url: relayed.url, gateway: gateway)
        #expect(seen.documents == truth.documents && seen.status == truth.status, "\(seen) / \(truth)")
        #expect(truth.documents == ["first"] + (0..<5).map { "live-\($0)" } && truth.status == 0, "\(truth)")
        let summary = try #require(await relayed.summaries(1).first)
        #expect(summary.continuous == true && summary.replicationType == "pushAndPull")
        #expect(summary.pushed.documents == 5 && summary.pulled.documents == 1, "\(summary.pushed) / \(summary.pulled)")
        #expect(summary.protocolViolations == 0 && summary.findings.isEmpty, "\(summary.findings)")
        #expect(relayed.events.decodeErrors == 0)
        try await relayed.shutdown()
    }
}
