import BLIPTestSupport
import Foundation
import NIOPosix
import Policy
import Relay
import Replication
import Testing

/// Couchbase Lite (cblite, LiteCore 3.1) against a real Sync Gateway (3.2 and/or 4.1), directly
/// and through the relay: the relayed run must end as the direct one, and the relay's account
/// (summary, findings) must equal what SG and the client hold. Opt-in: set
/// `BLIPSCOPE_SYNC_GATEWAY` (and/or `BLIPSCOPE_SYNC_GATEWAY4`) and `BLIPSCOPE_CBLITE`.
@Suite(.serialized, .enabled(if: SyncGateway.anyAvailable && CBLite.available,
                             "set BLIPSCOPE_SYNC_GATEWAY or BLIPSCOPE_SYNC_GATEWAY4, and BLIPSCOPE_CBLITE"))
struct SyncGatewayTests {
    /// A relay in front of `gateway`, with a policy or a capture if given.
    static func relay(to gateway: SyncGateway, policy: String? = nil, capture: String? = nil)
        async throws -> (group: MultiThreadedEventLoopGroup, relay: RelayServer, url: String, events: EventCounter) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: gateway.publicPort)))
        configuration.listenPort = 0
        configuration.captureDirectory = capture
        if let policy { configuration.policy = PolicyStore(document: try PolicyDocument(yaml: policy)) }
        let (relay, port, events) = try await InteropHarness.startRelay(configuration, group: group)
        return (group, relay, "ws://127.0.0.1:\(port)/db", events)
    }

    /// What one run ended with, to compare direct and relayed runs.
    struct Outcome: Equatable {
        var pushStatus: Int32
        var pushed: String
        var gatewayDocuments: [String]
        var pullStatus: Int32
        var pulled: String
        var clientDocuments: [String]
    }

    static func completed(_ output: String) -> String {
        output.split(separator: "\n").last { $0.contains("Completed") }.map { String($0.split(separator: " in ").first ?? "") } ?? output
    }

    /// Push 1,000 documents (every hundredth of 210 KB, two of 2 MB), delete three, push again,
    /// then pull everything into a new database.
    static func pushDeletePull(_ cblite: CBLite, url: String, gateway: SyncGateway, tag: String) async throws -> Outcome {
        var documents = mixedDocuments(1000)
        for index in 1...2 { documents.append(["_id": "huge-\(index)", "blob": String(repeating: "0123456789abcdef", count: 131_072)]) }
        let source = try cblite.database("source-\(tag)", holding: documents)
        let pushed = try cblite.run(["push", source, url], seconds: 300)
        for id in ["doc-0001", "doc-0002", "doc-0100"] { _ = try cblite.run(["rm", source, id]) }
        let again = try cblite.run(["push", source, url], seconds: 300)
        let copy = try cblite.database("copy-\(tag)")
        let pulled = try cblite.run(["pull", copy, url], seconds: 300)
        return Outcome(pushStatus: pushed.status + again.status, pushed: completed(pushed.output) + " / " + completed(again.output),
                       gatewayDocuments: try await gateway.documentIDs(), pullStatus: pulled.status,
                       pulled: completed(pulled.output), clientDocuments: try cblite.documentIDs(copy))
    }

    @Test(arguments: SyncGateway.binaries)
    func pushDeleteAndPullEndAsTheyDoDirect(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: binary)
        let relayed = try await SyncGateway(binary: binary)
        defer { direct.cleanUp(); relayed.cleanUp() }
        let (group, relay, url, events) = try await Self.relay(to: relayed)

        let truth = try await Self.pushDeletePull(cblite, url: direct.url, gateway: direct, tag: "direct")
        let seen = try await Self.pushDeletePull(cblite, url: url, gateway: relayed, tag: "relayed")
        #expect(seen == truth)
        #expect(truth.pushStatus == 0 && truth.pullStatus == 0 && truth.gatewayDocuments.count == 999, "\(truth)")

        await events.wait { $0.summaries.count == 3 }
        #expect(events.decodeErrors == 0)
        let summaries = events.summaries.compactMap(\.replication)
        #expect(summaries.allSatisfy { $0.protocolViolations == 0 && $0.findings.isEmpty }, "\(summaries.map(\.findings))")
        // What SG stored, what the client stored: the relay's account of each run.
        #expect(summaries.map(\.pushed.documents) == [1002, 3, 0])
        #expect(summaries.last?.pulled.documents == seen.clientDocuments.count)
        #expect(summaries.last?.pullCaughtUp == true)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// SG sends revs NoReply; every verdict on them ends the pull as the policy says, never in a
    /// hang, and the relay's count of what the client stored is what it stored.
    @Test(arguments: SyncGateway.binaries)
    func everyVerdictOnSyncGatewaysRevsEndsThePull(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary)
        defer { gateway.cleanUp() }
        try await gateway.put((0..<200).map { ["_id": "doc\($0)", "n": $0] })
        let revs = "from: server, type: request, profile: rev"
        let policies: [(name: String, yaml: String, stored: Int?)] = [
            ("deny", "{ \(revs), doc: \"doc1?\" }\n    action: { deny: { code: 403, message: \"no\" } }", 190),
            ("errorReply", "{ \(revs), doc: \"doc1?\" }\n    action: { errorReply: { code: 503, message: \"injected\" } }", 190),
            ("rateLimit deny", "{ \(revs) }\n    action: { rateLimit: { perSecond: 20, burst: 50, key: session, onExceed: deny } }", nil),
            ("rateLimit delay", "{ \(revs) }\n    action: { rateLimit: { perSecond: 400, burst: 50, key: session, onExceed: delay } }", 200),
            ("filterChanges", "{ type: request, profile: [changes, proposeChanges] }\n    action: { filterChanges: { doc: \"doc1?\" } }", 190),
            ("readOnly", "{ user: \"*\" }\n    action: readOnly", 200),
            ("delay", "{ \(revs), doc: \"doc5*\" }\n    action: { delay: 20ms }", 200),
        ]
        for (name, rule, stored) in policies {
            let yaml = "rules:\n  - name: rule\n    match: \(rule)"
            let (group, relay, url, events) = try await Self.relay(to: gateway, policy: yaml)
            let local = try cblite.database("pull-\(name.replacingOccurrences(of: " ", with: "-"))")
            let pulled = try await cblite.runOffThePool(["pull", local, url], seconds: 180)
            #expect(pulled.status == 0, "\(name): \(pulled.output.suffix(300))")
            let documents = try cblite.documentIDs(local)
            if let stored { #expect(documents.count == stored, "\(name)") }
            await events.wait { $0.summaries.count == 1 }
            let summary = try #require(events.summaries.first?.replication)
            #expect(summary.pulled.documents == documents.count, "\(name): the relay's count is what cblite stored")
            // What the client did not get was withheld by the relay, or (filterChanges) never offered.
            if name != "filterChanges" { #expect(summary.pulled.documents + summary.pulled.revisionsWithheld == 200, "\(name)") }
            #expect(summary.protocolViolations == 0 && events.decodeErrors == 0, "\(name)")
            try await relay.shutdown()
            try await group.shutdownGracefully()
        }
        // A close verdict stops the pull with the policy's error, never a hang.
        let yaml = "rules:\n  - name: cut\n    match: { \(revs) }\n    action: { close: { code: 1011, reason: \"injected\", afterMessages: 50 } }"
        let (group, relay, url, _) = try await Self.relay(to: gateway, policy: yaml)
        let cut = try await cblite.runOffThePool(["pull", try cblite.database("pull-close"), url], seconds: 180)
        #expect(cut.status != 0 && cut.output.contains("injected"), "\(cut.output.suffix(300))")
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    @Test(arguments: SyncGateway.binaries)
    func basicCredentialsAfterSyncGatewaysChallengeAndAWrongPassword(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary, guest: false)
        defer { gateway.cleanUp() }
        try await gateway.put([["_id": "private", "n": 1]])
        let (group, relay, url, events) = try await Self.relay(to: gateway)
        for (user, expectOK) in [("alice:letmein", true), ("alice:wrong", false)] {
            let direct = try cblite.run(["pull", "--user", user, try cblite.database("direct-\(expectOK)"), gateway.url])
            let relayed = try cblite.run(["pull", "--user", user, try cblite.database("relayed-\(expectOK)"), url])
            #expect((direct.status == 0) == expectOK && (relayed.status == 0) == expectOK, "\(direct.output) / \(relayed.output)")
        }
        let anonymous = try cblite.run(["pull", try cblite.database("anonymous"), url])
        #expect(anonymous.status != 0)
        #expect(events.refusals.contains { $0.status.code == 401 }, "SG's challenge reached the client")
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// The relay's capture and SG's own log, joined: SG's line for each request it handled
    /// follows that request.
    @Test(arguments: SyncGateway.binaries)
    func syncGatewaysLogLinesStandBesideTheSession(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary)
        defer { gateway.cleanUp() }
        try await gateway.put((0..<20).map { ["_id": "doc\($0)", "n": $0] })
        let capture = cblite.directory.appendingPathComponent("capture").path
        let (group, relay, url, events) = try await Self.relay(to: gateway, capture: capture)
        let pulled = try cblite.run(["pull", try cblite.database("local"), url])
        #expect(pulled.status == 0)
        await events.wait { $0.summaries.count == 1 }
        let id = try #require(events.summaries.first?.info.correlationID, "SG's 101 names the replication's context")
        try await relay.shutdown()
        try await group.shutdownGracefully()
        #expect(gateway.log.contains("c:[\(id)]"))

        let result = try await BlipscopeExecutable.run(["inspect", capture, "--sg-log", gateway.logPath, "--json"])
        #expect(result.status == 0, "\(result.errors)")
        let records = result.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let tied = records.enumerated().filter { $0.element["type"] as? String == "SGLOG" && $0.element["number"] != nil }
        #expect(!tied.isEmpty)
        for (position, record) in tied {
            let line = try #require(record["line"] as? String)
            let request = records[..<position].last { $0["type"] as? String == "MSG" && $0["from"] as? String == "client" }
            let profile = try #require((request?["properties"] as? [String: String])?["Profile"])
            #expect(line.contains("Type:\(profile)") && line.contains("c:[\(id)]"), "\(line)")
        }
    }

    /// A continuous pull gets the documents written through SG's REST API while it runs, directly
    /// and through the relay alike.
    @Test(arguments: SyncGateway.binaries)
    func aContinuousPullGetsWhatIsWrittenThroughTheRESTAPI(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary)
        defer { gateway.cleanUp() }
        try await gateway.put([["_id": "first", "n": 1]])
        let (group, relay, url, events) = try await Self.relay(to: gateway)
        var held: [[String]] = []
        for (tag, target) in [("direct", gateway.url), ("relayed", url)] {
            let local = try cblite.database("continuous-\(tag)")
            let pull = try cblite.start(["pull", "--continuous", local, target])
            try await gateway.put([["_id": "later-\(tag)", "n": 2]])
            // Bounded: the document shows in the client's database once stored.
            for _ in 0..<600 where !((try? cblite.documentIDs(local)) ?? []).contains("later-\(tag)") {
                try await Task.sleep(for: .milliseconds(100))
            }
            _ = try pull.stop()
            held.append(try cblite.documentIDs(local).filter { !$0.hasPrefix("later-") || $0 == "later-\(tag)" })
        }
        #expect(held[0].count == 2 && held[0].count == held[1].count, "\(held)")
        await events.wait { $0.summaries.count == 1 }
        let summary = try #require(events.summaries.first?.replication)
        #expect(summary.continuous == true && summary.protocolViolations == 0 && events.decodeErrors == 0)
        #expect(events.summaries.first?.replication?.pulled.revisionsSent ?? 0 >= 2)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// SG's sync function refuses some pushed documents (403 per document): the push ends as it
    /// does direct, and the relay counts what SG stored and the 403s it sent.
    @Test(arguments: SyncGateway.binaries)
    func syncFunctionRefusalsArePerDocument(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let sync = #"function(doc, oldDoc) { if (doc.secret) { throw({forbidden: "secrets stay on the device"}); } channel("public"); }"#
        let direct = try await SyncGateway(binary: binary, sync: sync)
        let relayed = try await SyncGateway(binary: binary, sync: sync)
        defer { direct.cleanUp(); relayed.cleanUp() }
        let (group, relay, url, events) = try await Self.relay(to: relayed)
        let documents: [[String: Any]] = (0..<10).map { ["_id": "d\($0)", "secret": $0 % 3 == 0] }
        let one = try cblite.run(["push", try cblite.database("one", holding: documents), direct.url])
        let two = try cblite.run(["push", try cblite.database("two", holding: documents), url])
        #expect(Self.completed(one.output) == Self.completed(two.output), "\(one.output) / \(two.output)")
        let stored = try await relayed.documentIDs()
        #expect(stored == (try await direct.documentIDs()) && stored.count == 6)
        await events.wait { $0.summaries.count == 1 }
        let summary = try #require(events.summaries.first?.replication)
        #expect(summary.pushed.documents == 6, "what SG stored")
        #expect(summary.pushed.revisionsRefused >= 4 && (summary.errorsByDomainAndCode["HTTP 403"] ?? 0) >= 4)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// LiteCore 4 (cblite 4.0, a version-vector database) with Sync Gateway 4.1 over
    /// `BLIP_3+CBMobile_4`: push and pull end as direct, and the relay reads them without a
    /// violation or a finding.
    @Test(.enabled(if: SyncGateway.available(SyncGateway.path4) && CBLite.available4, "needs BLIPSCOPE_SYNC_GATEWAY4 and BLIPSCOPE_CBLITE4"))
    func versionVectorsWithSyncGateway4() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let direct = try await SyncGateway(binary: SyncGateway.path4!)
        let relayed = try await SyncGateway(binary: SyncGateway.path4!)
        defer { direct.cleanUp(); relayed.cleanUp() }
        let (group, relay, url, events) = try await Self.relay(to: relayed)
        var outcomes: [[String]] = []
        for (tag, target) in [("direct", direct.url), ("relayed", url)] {
            let source = try cblite.vectorDatabase("source-\(tag)")
            try cblite.put(mixedDocuments(60, largeEvery: 20), into: source)
            let pushed = try cblite.run(["push", source, target])
            #expect(pushed.status == 0 && pushed.output.contains("Completed 60 docs"), "\(tag): \(pushed.output.suffix(300))")
            let copy = try cblite.vectorDatabase("copy-\(tag)")
            let pulled = try cblite.run(["pull", copy, target])
            #expect(pulled.status == 0, "\(tag): \(pulled.output.suffix(300))")
            outcomes.append([Self.completed(pushed.output), Self.completed(pulled.output)] + (try cblite.documentIDs(copy)))
        }
        #expect(outcomes[0] == outcomes[1])
        await events.wait { $0.summaries.count == 2 }
        for summary in events.summaries {
            #expect(summary.info.subprotocol == "BLIP_3+CBMobile_4")
            #expect(summary.replication?.protocolViolations == 0 && summary.replication?.findings.isEmpty == true,
                    "\(summary.replication?.findings ?? [])")
        }
        #expect(events.summaries.compactMap(\.replication).map { $0.pushed.documents + $0.pulled.documents } == [60, 60])
        #expect(events.decodeErrors == 0)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// A version-vector database speaks only CBMobile_4, which Sync Gateway 3.2 does not: refused
    /// with HTTP 500 directly, and through the relay alike.
    @Test(.enabled(if: SyncGateway.available(SyncGateway.path3) && CBLite.available4, "needs BLIPSCOPE_SYNC_GATEWAY and BLIPSCOPE_CBLITE4"))
    func aVersionVectorDatabaseAgainstSyncGateway3() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: SyncGateway.path3!)
        defer { gateway.cleanUp() }
        let (group, relay, url, events) = try await Self.relay(to: gateway)
        let source = try cblite.vectorDatabase("source")
        try cblite.put([["_id": "one", "n": 1]], into: source)
        let direct = try cblite.run(["push", source, gateway.url])
        let relayed = try cblite.run(["push", source, url])
        #expect(direct.status != 0 && relayed.status != 0, "\(direct.output) / \(relayed.output)")
        #expect(events.refusals.contains { $0.status.code == 500 }, "SG's refusal reached the client")
        #expect(try await gateway.documentIDs().isEmpty)
        try await relay.shutdown()
        try await group.shutdownGracefully()
    }

    /// Sync Gateway killed during a continuous pull: cblite (which never retries) stops with the
    /// same error directly and through the relay, and the relay's account says the server's side
    /// went away without a CLOSE.
    @Test(arguments: SyncGateway.binaries)
    func syncGatewayKilledDuringAContinuousPull(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        var endings: [Int32] = []
        var events: EventCounter?
        for tag in ["direct", "relayed"] {
            let gateway = try await SyncGateway(binary: binary)
            defer { gateway.cleanUp() }
            try await gateway.put([["_id": "first", "n": 1]])
            let relayed = tag == "relayed" ? try await Self.relay(to: gateway) : nil
            let local = try cblite.database("killed-\(tag)")
            let pull = try cblite.start(["pull", "--continuous", local, relayed?.url ?? gateway.url])
            try await cblite.waitForDocuments(local, count: 1)
            gateway.kill()
            let ended = try pull.finish(within: 60)
            endings.append(ended.status)
            if let relayed {
                await relayed.events.wait { $0.summaries.count == 1 }
                events = relayed.events
                try await relayed.relay.shutdown()
                try await relayed.group.shutdownGracefully()
            }
        }
        #expect(endings[0] == endings[1] && endings[0] != -9, "cblite ends by itself, the same way: \(endings)")
        let summary = try #require(events?.summaries.first)
        #expect(summary.upstreamClose?.abrupt == true && summary.clientClose == nil, "the upstream went away without a CLOSE; the client was dropped by the relay")
        #expect(summary.replication?.closes.map(\.from) == ["server"] && summary.replication?.closes.first?.isDrop == true,
                "\(summary.replication?.closes ?? [])")
    }
}
