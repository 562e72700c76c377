import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import NIOPosix
import Replay
import Foundation
import Gateway
import Policy
import Relay
import Replication
import Testing
import WebView

/// Couchbase Lite's own engine (the `cblite` tool, LiteCore 3.1) replicating with the embedded
/// gateway through the relay. Opt-in: set `BLIPSCOPE_CBLITE` to the tool's path. Every scenario
/// ends with the relay having decoded every message (0 decode errors) and LiteCore having
/// finished, or stopped for the documented reason, never for a protocol error.
@Suite(.serialized, .enabled(if: CBLite.available, "set BLIPSCOPE_CBLITE to a cblite 3.1 binary"))
struct LiteCoreThroughRelayTests {
    @Test func pushAndPullOneThousandDocumentsWithLargeOnesAndDeletions() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start()
        let source = try cblite.database("source", holding: mixedDocuments(1000))
        let pushed = try cblite.run(["push", source, harness.url()])
        #expect(pushed.status == 0 && pushed.output.contains("Completed 1000 docs"), "\(pushed.output)")
        #expect(harness.database.documentCount() == 1000)
        for id in ["doc-0001", "doc-0002", "doc-0100"] { _ = try cblite.run(["rm", source, id]) }
        let again = try cblite.run(["push", source, harness.url()])
        #expect(again.status == 0, "\(again.output)")
        #expect(harness.database.document("doc-0100")?.isDeleted == true)

        let copy = try cblite.database("copy")
        let pulled = try cblite.run(["pull", copy, harness.url()])
        #expect(pulled.status == 0, "\(pulled.output)")
        #expect(try cblite.documentIDs(copy).count == 997)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aBlobOfSeveralMegabytesTravelsBothWays() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let harness = try await InteropHarness.start(databases: ["db", "other"], seed: { database in
            _ = try database.put("photo", body: ["title": .string("a picture")],
                                 attachments: ["photo.png": Attachment(contentType: "image/png", data: blob)])
        })
        try pullThenPushBlob(blob, cblite: cblite, harness: harness)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aConflictingPushKeepsTheGatewaysRevision() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(seed: { try $0.put("shared", body: ["v": .number("1")]) })
        let local = try cblite.database("local")
        _ = try cblite.run(["pull", local, harness.url()])
        _ = try cblite.run(["put", local, "shared", #"{"v":"mine"}"#])
        let theirs = try harness.database.put("shared", body: ["v": .string("theirs")])
        let pushed = try cblite.run(["push", local, harness.url()])
        // cblite reports a conflict as a document not pushed (it has no resolver), not as an error.
        #expect(pushed.status == 0 && pushed.output.contains("Completed 0 docs"), "\(pushed.output)")
        #expect(harness.database.document("shared")?.currentRevID == theirs)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aContinuousPullReceivesALaterChange() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(seed: { try $0.put("first", body: ["n": .number("1")]) })
        let local = try cblite.database("local")
        let pull = try cblite.start(["pull", "--continuous", local, harness.url()])
        try await cblite.waitForDocuments(local, count: 1)
        _ = try harness.database.put("later", body: ["n": .number("2")])
        try await cblite.waitForDocuments(local, count: 2)
        let stopped = try pull.stop()
        #expect(!stopped.output.contains("ERROR"), "\(stopped.output)")
        #expect(try cblite.documentIDs(local) == ["first", "later"])
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    // MARK: mediating

    /// LiteCore pulls the `photo` document and its `blob` from `db` and pushes them on to `other`,
    /// both through the relay: the blob crosses as a `getAttachment` reply each way (the gateway's,
    /// then LiteCore's), and each side ends with it whole.
    private func pullThenPushBlob(_ blob: [UInt8], cblite: CBLite, harness: InteropHarness,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let local = try cblite.database("local")
        let pulled = try cblite.run(["pull", local, harness.url()])
        #expect(pulled.status == 0, "\(pulled.output)", sourceLocation: sourceLocation)
        #expect(try cblite.documentIDs(local) == ["photo"], sourceLocation: sourceLocation)
        #expect(cblite.blobCount(local) == 1, "LiteCore fetched the blob with getAttachment", sourceLocation: sourceLocation)
        let pushed = try cblite.run(["push", local, harness.url("other")])
        #expect(pushed.status == 0, "\(pushed.output)", sourceLocation: sourceLocation)
        #expect(harness.databases[1].hasAttachment(digest: GatewayDatabase.attachmentDigest(of: blob)),
                "the gateway fetched LiteCore's blob", sourceLocation: sourceLocation)
    }

    /// Runs a LiteCore pull through a relay with `policy`, from a gateway holding `count` documents.
    private func pull(_ count: Int, policy yaml: String, clock: (@Sendable () -> UInt64)? = nil)
        async throws -> (result: CBLite.Result, ids: [String], harness: InteropHarness, cblite: CBLite) {
        let cblite = try CBLite()
        let harness = try await InteropHarness.start(seed: { database in
            for index in 0..<count { _ = try database.put(String(format: "doc-%04d", index), body: ["n": .number(String(index))]) }
        }, relay: { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: yaml))
            if let clock { configuration.policyClock = clock }
        })
        let local = try cblite.database("local")
        let result = try cblite.run(["pull", local, harness.url()])
        return (result, try cblite.documentIDs(local), harness, cblite)
    }

    @Test func aPullWithDeniedRevsEndsWithTheOthers() async throws {
        let (result, ids, harness, cblite) = try await pull(200, policy: """
            rules:
              - name: no-0-9
                match: { from: server, type: request, profile: rev, doc: "doc-000*" }
                action: { deny: { code: 403, message: "withheld" } }
            """)
        defer { cblite.cleanUp() }
        #expect(result.status == 0, "\(result.output)")
        #expect(ids.count == 190)
        #expect(harness.events.verdicts.filter { $0.action == "deny 403 (no ERR) + norev" }.count == 10)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aFilteredPullARateLimitedOneAndADelayedOneComplete() async throws {
        for policy in [
            """
            rules:
              - { name: hide, match: { from: server, type: request, profile: changes }, action: { filterChanges: { doc: "doc-001*" } } }
            """,
            """
            rules:
              - { name: slow, match: { from: server, type: request, profile: rev }, action: { rateLimit: { perSecond: 200, burst: 20, key: session, onExceed: delay } } }
            """,
            """
            rules:
              - { name: think, match: { from: server, type: request, profile: changes }, action: { delay: 50ms } }
            """,
        ] {
            let (result, ids, harness, cblite) = try await pull(100, policy: policy)
            defer { cblite.cleanUp() }
            #expect(result.status == 0, "\(result.output)")
            #expect(ids.count == (policy.contains("filterChanges") ? 90 : 100), "\(policy)")
            #expect(harness.events.decodeErrors == 0)
            let findings = harness.events.summaries.flatMap { $0.replication?.findings ?? [] }
            #expect(findings.isEmpty, "no false findings: \(findings)")
            try await harness.shutdown()
        }
    }

    /// The policy intervenes in both directions (a delayed `getAttachment`, a denied `rev`), so
    /// the relay renumbers and re-frames them; the blob's 3 MB replies still reach LiteCore and
    /// the gateway whole, and the relay, whose analyzer does not read attachments, holds none.
    @Test func aBlobTravelsBothWaysThroughAMediatingRelayThatHoldsNoCopy() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let harness = try await InteropHarness.start(databases: ["db", "other"], seed: { database in
            _ = try database.put("hidden", body: ["n": .number("0")])
            _ = try database.put("photo", body: ["title": .string("a picture")],
                                 attachments: ["photo.png": Attachment(contentType: "image/png", data: blob)])
        }, relay: { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: """
                rules:
                  - { name: hide, match: { from: server, type: request, profile: rev, doc: "hidden" }, action: { deny: { code: 403 } } }
                  - { name: wait, match: { type: request, profile: getAttachment }, action: { delay: 20ms } }
                """))
        })
        try pullThenPushBlob(blob, cblite: cblite, harness: harness)
        let verdicts = harness.events.verdicts.map(\.action)
        #expect(verdicts.contains("deny 403 (no ERR) + norev") && verdicts.filter { $0.hasPrefix("delay") }.count == 2, "\(verdicts)")
        let replies = harness.events.attachmentReplies
        #expect(replies.count == 2, "one each way")
        for reply in replies {
            #expect(reply.length == blob.count)
            #expect(reply.held <= 1024, "the relay kept at most a preview of the blob")
        }
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    /// A `bandwidth` rule paces the blob's 3 MB `getAttachment` replies frame by frame, both ways
    /// (the gateway's to LiteCore on the pull, LiteCore's to the gateway on the push): each
    /// arrives whole and checks out, and what the relay held for the link at once stayed near its
    /// small delay budget instead of the whole blob.
    @Test func aBlobThroughABandwidthRuleArrivesWholeWithLittleHeld() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let blob = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }
        let budget = 256 * 1024
        let harness = try await InteropHarness.start(databases: ["db", "other"], seed: { database in
            _ = try database.put("photo", body: ["title": .string("a picture")],
                                 attachments: ["photo.png": Attachment(contentType: "image/png", data: blob)])
        }, relay: { configuration in
            configuration.mediationLimits.maxDelayedBytes = budget
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: """
                rules:
                  - { name: thin, match: { type: reply, profile: getAttachment }, action: { bandwidth: 8MB } }
                """))
        })
        try pullThenPushBlob(blob, cblite: cblite, harness: harness)
        let paced = harness.events.verdicts.filter { $0.rule == "thin" }
        #expect(paced.count == 2 && paced.allSatisfy { $0.action.hasPrefix("pace ") }, "\(paced.map(\.action))")
        let summaries = harness.events.summaries
        #expect(summaries.count == 2)
        for summary in summaries {
            let peak = summary.statistics.maxDelayedBytes.max() ?? 0
            #expect(peak > 0 && peak <= budget + 4 * 64 * 1024 + 16 * 1024, "peak \(peak)")
        }
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aReadOnlyPolicyRefusesThePushAndLiteCoreSaysWhy() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(relay: { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: "rules:\n  - { name: guests, action: readOnly }"))
        })
        let source = try cblite.database("source", holding: mixedDocuments(20, largeEvery: 1000))
        let pushed = try cblite.run(["push", source, harness.url()])
        #expect(pushed.output.contains("403"), "\(pushed.output)")
        #expect(harness.database.documentCount() == 0)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aPushWithMoreThanTwoHundredDeniedRevsDoesNotStall() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let harness = try await InteropHarness.start(relay: { configuration in
            configuration.policy = PolicyStore(document: try PolicyDocument(yaml: """
                rules:
                  - { name: drafts, match: { from: client, type: request, profile: rev, doc: "draft-*" }, action: { deny: { code: 403 } } }
                """))
        })
        let documents = mixedDocuments(300, prefix: "draft", largeEvery: 1000) + mixedDocuments(50, prefix: "note", largeEvery: 1000)
        let source = try cblite.database("source", holding: documents)
        let pushed = try cblite.run(["push", source, harness.url()], seconds: 60)
        #expect(pushed.status == 0, "\(pushed.output)")
        #expect(harness.database.documentCount() == 50)
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aCloseFaultStopsLiteCoreWithItsCode() async throws {
        let (result, _, harness, cblite) = try await pull(300, policy: """
            rules:
              - name: cut
                match: { from: server, type: request, profile: rev }
                action: { close: { code: 1011, reason: "injected", afterMessages: 20 }, limit: 1 }
            """)
        defer { cblite.cleanUp() }
        #expect(result.output.contains("1011") || result.output.lowercased().contains("unexpected"), "\(result.output)")
        #expect(!result.output.lowercased().contains("checksum") && !result.output.lowercased().contains("deflate"))
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    /// LiteCore ACKs a large rev each time 50,000 of its bytes are unacknowledged. The relay can
    /// read the rev's last frame from the gateway before an ACK LiteCore sent earlier, so the ACK
    /// reaches the web view after the rev's record is made; it is then found by its number among
    /// the finished records. Every ACK LiteCore sent is on the rev (with that lookup broken, the
    /// last was lost in one run of three).
    @Test func theWebViewKeepsEveryAckLiteCoreSendsForALargeRev() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let noise = String((0..<400_000).map { _ -> Character in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Character(UnicodeScalar(UInt8(97 + (state >> 33) % 26)))
        })
        let history = SessionHistory(limits: .default)
        let acks = AckTally()
        let harness = try await InteropHarness.start(seed: { try $0.put("big", body: ["name": .string(noise)]) },
                                                     observers: [HistoryObserver(history: history), acks])
        let pulled = try cblite.run(["pull", try cblite.database("copy"), harness.url()])
        #expect(pulled.status == 0, "\(pulled.output)")
        try await harness.shutdown()  // every session closed, every event seen

        let recording = try #require(history.recordings().first)
        let rev = try #require(recording.records(from: 0, limit: 10_000).first {
            $0.direction == .serverToClient && $0.type == .request && $0.profile == "rev"
        })
        let carriage = try #require(rev.carriage)
        #expect(rev.frameCount > 10 && carriage.frames.count == rev.frameCount - 1, "every frame but the last, which the record is")
        let sent = acks.fromClient(number: rev.number)
        #expect(sent.count >= 4, "about one ACK per 50,000 of the rev's bytes")
        #expect(carriage.acks.map(\.bytes) == sent, "every ACK LiteCore sent, in order")
    }
}

/// The ACKs a client sent for requests from the server, by request number, in order.
final class AckTally: RelayObserver, Sendable {
    let interests: RelayEventInterests = [.frames]
    private let acks = NIOLockedValueBox<[MessageNumber: [UInt64]]>([:])

    func observe(_ event: RelayEvent) {
        guard case .ack(_, let direction, let ack, _) = event, direction == .clientToServer, ack.type == .ackRequest else { return }
        acks.withLockedValue { $0[ack.number, default: []].append(ack.bytes) }
    }

    func fromClient(number: MessageNumber) -> [UInt64] { acks.withLockedValue { $0[number] ?? [] } }
}

/// Runs `body`, failing when it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw CBLiteFailure("no answer within \(limit)")
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// LiteCore over wss to the relay, and a captured LiteCore session replayed to LiteCore.
@Suite(.serialized, .enabled(if: CBLite.available, "set BLIPSCOPE_CBLITE to a cblite 3.1 binary"))
struct LiteCoreTLSAndReplayTests {
    /// A self-signed certificate for 127.0.0.1 that LiteCore's TLS (mbedTLS) accepts: its
    /// subjectAltName carries `DNS:127.0.0.1` besides `IP:127.0.0.1`.
    /// `names` and `commonName` replace those (to show what a LiteCore accepts without them).
    static func certificate(in directory: URL, commonName: String = "127.0.0.1",
                            names: String = "IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost") throws -> (certificate: String, key: String) {
        let certificate = directory.appendingPathComponent("relay.crt").path, key = directory.appendingPathComponent("relay.key").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(commonName)",
                             "-addext", "subjectAltName=\(names)",
                             "-keyout", key, "-out", certificate]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CBLiteFailure("openssl could not make a certificate") }
        return (certificate, key)
    }

    @Test func aPullOverWSS() async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let tls = try Self.certificate(in: cblite.directory)
        let harness = try await InteropHarness.start(seed: { database in
            for index in 0..<50 { _ = try database.put("doc-\(index)", body: ["n": .number(String(index))]) }
        }, relay: { $0.serverTLS = BLIPServerTLS(certificateChainPath: tls.certificate, privateKeyPath: tls.key) })
        let local = try cblite.database("local")
        let pulled = try cblite.run(["pull", "--cacert", tls.certificate, local, harness.url(secure: true)])
        #expect(pulled.status == 0 && pulled.output.contains("Completed 50 docs"), "\(pulled.output)")
        #expect(harness.events.decodeErrors == 0)
        try await harness.shutdown()
    }

    @Test func aCapturedPullServedByReplayToANewLiteCore() async throws {
        try await capturedPullServedByReplay(decoding: true)
    }

    /// `relay --no-decode`: LiteCore's pull goes through untouched, the relay reads no message,
    /// and its capture still serves the pull again to a new LiteCore.
    @Test func aPullThroughARelayThatDoesNotDecodeIsCapturedWhole() async throws {
        try await capturedPullServedByReplay(decoding: false)
    }

    private func capturedPullServedByReplay(decoding: Bool) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let captures = cblite.directory.appendingPathComponent("captures")
        let harness = try await InteropHarness.start(seed: { database in
            for document in mixedDocuments(120, largeEvery: 60) {
                let id = document["_id"] as! String
                var body: [String: JSONValue] = [:]
                for (key, value) in document where key != "_id" {
                    body[key] = (value as? Int).map { .number(String($0)) } ?? .string(value as! String)
                }
                _ = try database.put(id, body: body)
            }
        }, relay: {
            $0.captureDirectory = captures.path
            $0.decodes = decoding
        })
        let first = try cblite.database("first")
        #expect(try cblite.run(["pull", first, harness.url()]).status == 0)
        try await harness.shutdown()  // the capture is complete once the relay has shut down
        let decoded = harness.events.summaries.map { $0.statistics.messagesDecoded.reduce(0, +) }.reduce(0, +)
        #expect(decoding ? decoded > 120 : decoded == 0, "\(decoded) messages decoded")
        #expect(harness.events.decodeErrors == 0)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: captures.path).first { $0.hasSuffix(".blipcap") })
        let script = try CapturedSession.load(path: captures.appendingPathComponent(file).path, session: nil).script(for: .server)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
        let second = try cblite.database("second")
        let replayed = try await cblite.runOffThePool(["pull", second, "ws://127.0.0.1:\(server.port)/db"], seconds: 60)
        await server.stop()
        try await group.shutdownGracefully()
        #expect(replayed.status == 0 && replayed.output.contains("Completed 120 docs"), "\(replayed.output)")
        #expect(try cblite.documentIDs(second) == cblite.documentIDs(first))
    }
}
