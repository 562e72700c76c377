import BLIPNIO
import Foundation
import Gateway
import NIOPosix
import Policy
import Relay
import Replay
import Replication
import Testing

/// LiteCore 4.0's `cblite` with a version-vector database through a mediating relay in front of
/// the embedded gateway (which speaks `BLIP_3+CBMobile_4`): denied `rev`s both ways, `readOnly`,
/// `filterChanges`, rate limits that delay and that deny, a delay, and a close fault. LiteCore
/// finishes, or stops for the documented reason, never for a protocol error; the relay decodes
/// every message and the analyzer reports what the policy did, not false findings. Opt-in:
/// `BLIPSCOPE_CBLITE4`.
@Suite(.serialized, .enabled(if: CBLite.available4, "set BLIPSCOPE_CBLITE4 to a cblite 4.0 binary"))
struct LiteCore4MediatedTests {
    /// A relay with `yaml` in front of a gateway holding `count` documents (each with a version
    /// of the gateway's own).
    private func harness(_ count: Int, policy yaml: String) async throws -> InteropHarness {
        try await InteropHarness.start(seed: { database in
            for index in 0..<count { _ = try database.put(String(format: "doc-%04d", index), body: ["n": .number(String(index))]) }
        }, relay: { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: yaml))
        })
    }

    /// A one-shot pull into a new version-vector database through a relay with `yaml`.
    private func pull(_ count: Int, policy yaml: String)
        async throws -> (result: CBLite.Result, ids: [String], harness: InteropHarness, cblite: CBLite) {
        let cblite = try CBLite(executable: CBLite.path4)
        let harness = try await harness(count, policy: yaml)
        let local = try cblite.vectorDatabase("local")
        let result = try cblite.run(["pull", "-x", local, harness.url()])
        // cblite may exit before the relay has closed both legs: the summaries are read after it has.
        let closed = await harness.events.wait(atMost: 60) { !$0.summaries.isEmpty }
        #expect(closed, "the relay closed the session")
        return (result, try cblite.documentIDs(local), harness, cblite)
    }

    private func withheld(_ harness: InteropHarness, _ side: KeyPath<ReplicationSummary, TransferCounts>) -> Int {
        harness.events.summaries.compactMap(\.replication).map { $0[keyPath: side].revisionsWithheld }.reduce(0, +)
    }

    @Test func aPullWithDeniedVersionsEndsWithTheOthers() async throws {
        let (result, ids, harness, cblite) = try await pull(200, policy: """
            rules:
              - name: no-0-9
                match: { from: server, type: request, profile: rev, doc: "doc-000*" }
                action: { deny: { code: 403, message: "withheld" } }
            """)
        defer { cblite.cleanUp() }
        #expect(result.status == 0 && result.output.contains("Completed 190 docs"), "\(result.output)")
        #expect(ids.count == 190 && !ids.contains("doc-0005"))
        #expect(harness.events.verdicts.filter { $0.action == "deny 403 (no ERR) + norev" }.count == 10)
        #expect(withheld(harness, \.pulled) == 10, "denied versions are withheld, not lost")
        harness.checkVersionVectorAnalysis()
        #expect(harness.events.summaries.allSatisfy { $0.replication?.pullCaughtUp == true })
        try await harness.shutdown()
    }

    /// 300 pushed versions denied: more than the 200 a passive side may have outstanding; the
    /// gateway is told of each with a norev, LiteCore retries each once (403) and finishes.
    @Test func aPushWithMoreThanTwoHundredDeniedVersionsDoesNotStall() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let harness = try await harness(0, policy: """
            rules:
              - { name: drafts, match: { from: client, type: request, profile: rev, doc: "draft-*" }, action: { deny: { code: 403 } } }
            """)
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(300, prefix: "draft", largeEvery: 1000) + mixedDocuments(50, prefix: "note", largeEvery: 1000),
                       into: source)
        let pushed = try cblite.run(["push", source, harness.url()], seconds: 90)
        #expect(pushed.status == 0 && pushed.output.contains("Completed 50 docs"), "\(pushed.output)")
        #expect(harness.database.documentCount() == 50)
        #expect(withheld(harness, \.pushed) >= 300, "each draft withheld (LiteCore retries a 403 once)")
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    @Test func aReadOnlyPolicyRefusesThePushAndLiteCoreSaysWhy() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let harness = try await harness(0, policy: "rules:\n  - { name: guests, action: readOnly }")
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(20, largeEvery: 1000), into: source)
        let pushed = try cblite.run(["push", source, harness.url()])
        #expect(pushed.output.contains("403"), "\(pushed.output)")
        #expect(!pushed.output.lowercased().contains("protocol"), "\(pushed.output)")
        #expect(harness.database.documentCount() == 0)
        harness.checkVersionVectorAnalysis(findings: false)
        try await harness.shutdown()
    }

    @Test(arguments: [
        ("filter", "{ name: hide, match: { from: server, type: request, profile: changes }, action: { filterChanges: { doc: \"doc-001*\" } } }"),
        ("rate", "{ name: slow, match: { from: server, type: request, profile: rev }, action: { rateLimit: { perSecond: 200, burst: 20, key: session, onExceed: delay } } }"),
        ("delay", "{ name: think, match: { from: server, type: request, profile: changes }, action: { delay: 50ms } }"),
    ])
    func aFilteredARateLimitedAndADelayedPullComplete(_ name: String, rule: String) async throws {
        let (result, ids, harness, cblite) = try await pull(100, policy: "rules:\n  - \(rule)")
        defer { cblite.cleanUp() }
        let expected = name == "filter" ? 90 : 100
        #expect(result.status == 0 && result.output.contains("Completed \(expected) docs"), "\(result.output)")
        #expect(ids.count == expected)
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    /// A rate limit that denies what exceeds it: the denied versions get norevs, and LiteCore
    /// ends with the rest.
    @Test func aPullOverARateLimitThatDeniesEndsWithWhatPassed() async throws {
        let (result, ids, harness, cblite) = try await pull(150, policy: """
            rules:
              - { name: tight, match: { from: server, type: request, profile: rev }, action: { rateLimit: { perSecond: 0.01, burst: 40, key: session, onExceed: deny } } }
            """)
        defer { cblite.cleanUp() }
        let denied = harness.events.verdicts.filter { $0.action.hasPrefix("deny") }.count
        #expect(denied == 110, "\(harness.events.verdicts.prefix(3))")
        #expect(result.status == 0 && result.output.contains("Completed 40 docs"), "\(result.output)")
        #expect(ids.count == 40)
        #expect(withheld(harness, \.pulled) == 110)
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    /// A close fault mid-pull: LiteCore stops with the injected code, the analyzer makes one
    /// finding of it rather than one per version left on its way.
    @Test func aCloseFaultStopsLiteCoreWithItsCode() async throws {
        let (result, _, harness, cblite) = try await pull(300, policy: """
            rules:
              - name: cut
                match: { from: server, type: request, profile: rev }
                action: { close: { code: 1011, reason: "injected", afterMessages: 20 }, limit: 1 }
            """)
        defer { cblite.cleanUp() }
        #expect(result.output.contains("1011") || result.output.lowercased().contains("unexpected"), "\(result.output)")
        for word in ["checksum", "deflate", "protocol", "number"] {
            #expect(!result.output.lowercased().contains(word), "\(result.output)")
        }
        harness.checkVersionVectorAnalysis(allowing: [.closedMidTransfer])
        let findings = harness.events.summaries.flatMap { $0.replication?.findings ?? [] }
        #expect(findings.map(\.kind) == [.closedMidTransfer], "\(findings)")
        try await harness.shutdown()
    }
}

/// LiteCore 4 over wss to the relay, and captured LiteCore 4 sessions replayed: the server role
/// to a new `cblite` 4.0 pull, the client role to a fresh embedded gateway (LiteCore 4's open
/// source has no listener to build a passive LiteCore 4 peer on).
@Suite(.serialized, .enabled(if: CBLite.available4, "set BLIPSCOPE_CBLITE4 to a cblite 4.0 binary"))
struct LiteCore4TLSAndReplayTests {
    @Test func aPullOverWSS() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let tls = try LiteCoreTLSAndReplayTests.certificate(in: cblite.directory)
        let harness = try await InteropHarness.start(seed: { database in
            for index in 0..<50 { _ = try database.put("doc-\(index)", body: ["n": .number(String(index))]) }
        }, relay: { $0.serverTLS = BLIPServerTLS(certificateChainPath: tls.certificate, privateKeyPath: tls.key) })
        let local = try cblite.vectorDatabase("local")
        let pulled = try cblite.run(["pull", "-x", "--cacert", tls.certificate, local, harness.url(secure: true)])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 50 docs"), "\(pulled.output)")
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(30), into: source)
        let pushed = try cblite.run(["push", "--cacert", tls.certificate, source, harness.url(secure: true)])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 30 docs"), "\(pushed.output)")
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()
    }

    /// LiteCore 4.0's TLS (mbedTLS 3.6) matches `127.0.0.1` against an `IP:` subjectAltName: the
    /// `DNS:127.0.0.1` entry LiteCore 3.1 needs is not needed here.
    @Test func aCertificateWithOnlyAnIPAddressIsEnough() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let (certificate, key) = try LiteCoreTLSAndReplayTests.certificate(in: cblite.directory, commonName: "localhost",
                                                                           names: "IP:127.0.0.1")
        let harness = try await InteropHarness.start(seed: { try $0.put("one", body: ["n": .number("1")]) },
                                                     relay: { $0.serverTLS = BLIPServerTLS(certificateChainPath: certificate, privateKeyPath: key) })
        let local = try cblite.vectorDatabase("local")
        let pulled = try cblite.run(["pull", "-x", "--cacert", certificate, local, harness.url(secure: true)])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 1 docs"), "\(pulled.output)")
        try await harness.shutdown()
    }

    /// The one capture file the relay wrote to `directory`.
    private func captured(in directory: URL) throws -> String {
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".blipcap") })
        return directory.appendingPathComponent(file).path
    }

    /// Each document's version as `cblite ls -l` shows it (sequences differ with arrival order).
    private func versions(_ database: String, _ cblite: CBLite) throws -> [String] {
        try cblite.run(["ls", "-l", database]).output.split(separator: "\n").dropFirst()
            .map { $0.split(separator: " ").prefix(2).joined(separator: " ") }.sorted()
    }

    @Test func aCapturedPullServedByReplayToANewLiteCore() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let captures = cblite.directory.appendingPathComponent("captures")
        let harness = try await InteropHarness.start(seed: { database in
            for document in mixedDocuments(120, largeEvery: 60) {
                var body: [String: JSONValue] = [:]
                for (key, value) in document where key != "_id" {
                    body[key] = (value as? Int).map { .number(String($0)) } ?? .string(value as! String)
                }
                _ = try database.put(document["_id"] as! String, body: body)
            }
        }, relay: { $0.captureDirectory = captures.path })
        let first = try cblite.vectorDatabase("first")
        let original = try cblite.run(["pull", "-x", first, harness.url()])
        #expect(original.status == 0 && original.output.contains("Completed 120 docs"), "\(original.output)")
        harness.checkVersionVectorAnalysis()
        try await harness.shutdown()  // the capture is complete once the relay has shut down
        let script = try CapturedSession.load(path: try captured(in: captures), session: nil).script(for: .server)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
        let second = try cblite.vectorDatabase("second")
        let replayed = try await cblite.runOffThePool(["pull", "-x", second, "ws://127.0.0.1:\(server.port)/db"], seconds: 60)
        await server.stop()
        try await group.shutdownGracefully()
        #expect(replayed.status == 0 && replayed.output.contains("Completed 120 docs"), "\(replayed.output)")
        #expect(try cblite.documentIDs(second) == cblite.documentIDs(first))
        #expect(try versions(second, cblite) == versions(first, cblite), "the same versions as the original pull")
    }

    @Test func aCapturedPushReplayedToAFreshGateway() async throws {
        let cblite = try CBLite(executable: CBLite.path4)
        defer { cblite.cleanUp() }
        let captures = cblite.directory.appendingPathComponent("captures")
        let harness = try await InteropHarness.start(relay: { $0.captureDirectory = captures.path })
        let source = try cblite.vectorDatabase("source")
        try cblite.put(mixedDocuments(60, largeEvery: 30), into: source)
        let pushed = try cblite.run(["push", source, harness.url()])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 60 docs"), "\(pushed.output)")
        let versions = harness.database.document("doc-0031")?.currentVersion
        try await harness.shutdown()
        let script = try CapturedSession.load(path: try captured(in: captures), session: nil).script(for: .client)

        let fresh = try await InteropHarness.start()
        let report = try await ReplayClient.run(script, target: "ws://127.0.0.1:\(fresh.gateway.port)/db",
                                                configuration: ReplayConfiguration(), group: fresh.group)
        #expect(report.endedEarly == nil, "\(report.endedEarly ?? "")")
        #expect(report.requestsSent == report.requestsScripted)
        #expect(fresh.database.documentCount() == 60)
        #expect(fresh.database.document("doc-0031")?.currentVersion == versions, "LiteCore's versions, as captured")
        try await fresh.shutdown()
    }
}
