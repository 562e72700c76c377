import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Relay
import Replication
import Testing

/// Who may see and write what, against a real Sync Gateway (3.2 and/or 4.1): users limited to
/// channels, the sync function's `requireAccess`, access revoked and documents moved out of a
/// user's channels during a continuous pull, GUEST disabled, SG session tokens, named
/// collections, and the Connected Client profiles (getRev, putRev, subChanges since now). Each
/// runs directly and through the relay; the relayed run must end as the direct one, and the
/// relay's account (summary, findings, per-document timelines) must equal what SG and the client
/// hold. Opt-in: set `BLIPSCOPE_SYNC_GATEWAY` (and/or `BLIPSCOPE_SYNC_GATEWAY4`) and `BLIPSCOPE_CBLITE`.
@Suite(.serialized, .enabled(if: SyncGateway.anyAvailable && CBLite.available,
                             "set BLIPSCOPE_SYNC_GATEWAY or BLIPSCOPE_SYNC_GATEWAY4, and BLIPSCOPE_CBLITE"))
struct SyncGatewayAccessTests {
    struct Relayed {
        var group: MultiThreadedEventLoopGroup
        var relay: RelayServer
        var port: Int
        var events: EventCounter

        var url: String { "ws://127.0.0.1:\(port)/db" }

        func shutdown() async throws {
            try await relay.shutdown()
            try await group.shutdownGracefully()
        }
    }

    /// A relay in front of `gateway`, with a capture and more observers if given.
    static func relay(to gateway: SyncGateway, capture: String? = nil, observers: [any RelayObserver] = []) async throws -> Relayed {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: gateway.publicPort)))
        configuration.listenPort = 0
        configuration.captureDirectory = capture
        let (relay, port, events) = try await InteropHarness.startRelay(configuration, group: group, observers: observers)
        return Relayed(group: group, relay: relay, port: port, events: events)
    }

    static func basic(_ user: String, _ password: String) -> [String: String] {
        ["Authorization": "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()]
    }

    /// What `user` may read, from SG's public API (`_all_docs` as that user).
    static func visible(to user: String, password: String, on gateway: SyncGateway, keyspace: String = "db") async throws -> [String] {
        let answer = try await gateway.send("GET", "/\(keyspace)/_all_docs", json: nil, admin: false, headers: basic(user, password))
        return try ids(answer.body)
    }

    /// Every live document of a keyspace (`db` or `db.scope.collection`), from the admin API.
    static func stored(_ gateway: SyncGateway, keyspace: String = "db") async throws -> [String] {
        try ids(try await gateway.send("GET", "/\(keyspace)/_all_docs", json: nil).body)
    }

    static func ids(_ allDocs: String) throws -> [String] {
        let json = try JSONSerialization.jsonObject(with: Data(allDocs.utf8)) as? [String: Any]
        return ((json?["rows"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
    }

    /// The relay's analysis of every session: no violation, no finding, nothing it could not decode.
    static func expectNoFalseFindings(_ events: EventCounter, _ label: String = "") {
        #expect(events.decodeErrors == 0, "\(label)")
        for session in events.summaries {
            let summary = session.replication
            #expect(summary?.protocolViolations == 0 && summary?.findings.isEmpty == true,
                    "\(label): \(session.info.analyzer?.findings.map(\.description) ?? [])")
        }
    }

    // MARK: Channels and access

    /// alice may read channel `a` only: a pull by her gets exactly the documents SG shows her,
    /// directly and through the relay, and the relay's account says so document by document.
    @Test(arguments: SyncGateway.binaries)
    func aUserPullsOnlyTheDocumentsOfItsChannels(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary, guest: false, channels: ["alice": ["a"]])
        defer { gateway.cleanUp() }
        var documents: [[String: Any]] = (0..<6).map { ["_id": "a-\($0)", "channels": ["a"]] }
        documents += (0..<4).map { ["_id": "b-\($0)", "channels": ["b"]] }
        documents.append(["_id": "both", "channels": ["a", "b"]])
        try await gateway.put(documents)
        let truth = try await Self.visible(to: "alice", password: "letmein", on: gateway)
        #expect(truth.count == 7 && !truth.contains { $0.hasPrefix("b-") }, "\(truth)")

        let relayed = try await Self.relay(to: gateway)
        var held: [[String]] = []
        for (tag, url) in [("direct", gateway.url), ("relayed", relayed.url)] {
            let local = try cblite.database("alice-\(tag)")
            let pulled = try cblite.run(["pull", "--user", "alice:letmein", local, url])
            #expect(pulled.status == 0, "\(tag): \(pulled.output.suffix(300))")
            held.append(try cblite.documentIDs(local))
        }
        #expect(held[0] == truth && held[1] == truth, "\(held)")

        await relayed.events.wait { $0.summaries.count == 1 }
        Self.expectNoFalseFindings(relayed.events)
        let session = try #require(relayed.events.summaries.first)
        let summary = try #require(session.replication)
        #expect(session.info.user == "alice")
        #expect(summary.pulled.documents == truth.count && summary.pulled.revisionsOffered == truth.count)
        let analyzer = try #require(session.info.analyzer)
        #expect(analyzer.timelineDocumentIDs == truth, "SG offered alice nothing else")
        for id in truth { #expect(analyzer.timeline(docID: id).map(\.kind).contains(.revKept), "\(id)") }
        try await relayed.shutdown()
    }

    /// The sync function's `requireAccess` refuses alice's pushes to a channel she lacks: one 403
    /// per document, the push ending as it does direct, and the relay's timeline of each
    /// document saying whether SG took it, with SG's reason for those it refused.
    @Test(arguments: SyncGateway.binaries)
    func requireAccessRefusesPushesToChannelsTheUserLacks(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let sync = "function(doc, oldDoc) { requireAccess(doc.channels); channel(doc.channels); }"
        let direct = try await SyncGateway(binary: binary, guest: false, sync: sync, channels: ["alice": ["a"]])
        let relayedGateway = try await SyncGateway(binary: binary, guest: false, sync: sync, channels: ["alice": ["a"]])
        defer { direct.cleanUp(); relayedGateway.cleanUp() }
        let relayed = try await Self.relay(to: relayedGateway)
        let documents: [[String: Any]] = (0..<10).map { ["_id": "p-\($0)", "channels": [$0 % 2 == 0 ? "a" : "b"]] }
        let one = try cblite.run(["push", "--user", "alice:letmein", try cblite.database("one", holding: documents), direct.url])
        let two = try cblite.run(["push", "--user", "alice:letmein", try cblite.database("two", holding: documents), relayed.url])
        #expect(SyncGatewayTests.completed(one.output) == SyncGatewayTests.completed(two.output), "\(one.output) / \(two.output)")
        let truth = try await Self.stored(direct)
        #expect(try await Self.stored(relayedGateway) == truth)
        #expect(truth == (0..<10).filter { $0 % 2 == 0 }.map { "p-\($0)" }, "\(truth)")

        await relayed.events.wait { $0.summaries.count == 1 }
        Self.expectNoFalseFindings(relayed.events)
        let session = try #require(relayed.events.summaries.first)
        let summary = try #require(session.replication)
        // LiteCore tries a refused revision again before it gives up: SG's log counts its refusals.
        func refusals(_ gateway: SyncGateway) -> Int {
            gateway.log.split(separator: "\n").count { $0.contains("Type:rev") && $0.contains("--> 403 sg missing channel access") }
        }
        let refused = refusals(relayedGateway)
        #expect(refused == refusals(direct) && refused >= documents.count - truth.count, "\(refused) / \(refusals(direct))")
        #expect(summary.pushed.documents == truth.count, "what SG stored")
        #expect(summary.pushed.revisionsRefused == refused && summary.errorsByDomainAndCode["HTTP 403"] == refused,
                "\(summary.pushed) \(summary.errorsByDomainAndCode)")
        let analyzer = try #require(session.info.analyzer)
        for document in documents {
            let id = document["_id"] as! String
            let last = try #require(analyzer.timeline(docID: id).last { $0.kind == .revAccepted || $0.kind == .revRefused }, "\(id)")
            if truth.contains(id) {
                #expect(last.kind == .revAccepted, "\(id)")
            } else {
                #expect(last.kind == .revRefused && last.note?.contains("403") == true
                        && last.note?.contains("sg missing channel access") == true, "\(id): \(last.summary)")
            }
        }
        try await relayed.shutdown()
    }

    /// During alice's continuous pull her grant of channel `b` is revoked (admin API) and a
    /// document is moved out of her channels: SG tells the client (revoked and removed changes
    /// rows, since LiteCore asks with `revocations=true`), the client purges them, and ends up
    /// holding what SG shows her, directly and through the relay alike. The relay reads the rows
    /// as revocations and removals, not as deletions, and raises no finding.
    @Test(arguments: SyncGateway.binaries)
    func revokedAccessAndRemovedDocumentsDuringAContinuousPull(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        var held: [[String]] = []
        var truths: [[String]] = []
        var relayedEvents: EventCounter?
        for tag in ["direct", "relayed"] {
            let gateway = try await SyncGateway(binary: binary, guest: false, channels: ["alice": ["a", "b"]])
            defer { gateway.cleanUp() }
            var documents: [[String: Any]] = (0..<3).map { ["_id": "a-\($0)", "channels": ["a"]] }
            documents += (0..<3).map { ["_id": "b-\($0)", "channels": ["b"]] }
            documents += [["_id": "moved", "channels": ["a"]], ["_id": "both", "channels": ["a", "b"]]]
            try await gateway.put(documents)
            let relayed = tag == "relayed" ? try await Self.relay(to: gateway) : nil
            let local = try cblite.database("revoked-\(tag)")
            let pull = try cblite.start(["pull", "--continuous", "--user", "alice:letmein", local, relayed?.url ?? gateway.url])
            try await cblite.waitForDocuments(local, count: documents.count)

            let revoked = try await gateway.send("PUT", "/db/_user/alice", json: ["password": "letmein", "admin_channels": ["a"]])
            #expect(revoked.status / 100 == 2, "\(revoked)")
            let current = try JSONSerialization.jsonObject(with: Data(try await gateway.get("/db/moved").utf8)) as? [String: Any]
            let moved = try await gateway.send("PUT", "/db/moved", json: ["_rev": current?["_rev"] as Any, "channels": ["c"]])
            #expect(moved.status / 100 == 2, "\(moved)")
            try await gateway.put([["_id": "marker", "channels": ["a"]]])
            let truth = try await Self.visible(to: "alice", password: "letmein", on: gateway)
            // Bounded: the client purges as the rows arrive; the marker comes after them.
            for _ in 0..<300 where (try? cblite.documentIDs(local)) != truth {
                try await Task.sleep(for: .milliseconds(100))
            }
            _ = try pull.stop()
            held.append(try cblite.documentIDs(local))
            truths.append(truth)
            if let relayed {
                await relayed.events.wait { $0.summaries.count == 1 }
                relayedEvents = relayed.events
                try await relayed.shutdown()
            }
        }
        #expect(truths[0] == truths[1] && truths[0] == ["a-0", "a-1", "a-2", "both", "marker"], "\(truths)")
        #expect(held[0] == truths[0] && held[1] == truths[1], "\(held)")

        let events = try #require(relayedEvents)
        #expect(events.decodeErrors == 0)
        let session = try #require(events.summaries.first)
        let summary = try #require(session.replication)
        #expect(summary.protocolViolations == 0, "\(summary.findings)")
        #expect(!summary.findings.contains { $0.kind != .closedMidTransfer }, "\(summary.findings)")
        let analyzer = try #require(session.info.analyzer)
        for id in ["b-0", "b-1", "b-2"] {
            let offers = analyzer.timeline(docID: id).filter { $0.kind == .offered }
            #expect(offers.count == 2 && offers.last?.deleted == false && offers.last?.note?.contains("revoked") == true,
                    "\(id): \(offers.map(\.summary))")
        }
        let movedOffers = analyzer.timeline(docID: "moved").filter { $0.kind == .offered }
        #expect(movedOffers.count == 2 && movedOffers.last?.deleted == false && movedOffers.last?.note?.contains("removed") == true,
                "\(movedOffers.map(\.summary))")
        #expect(summary.pulled.tombstones == 0)
        #expect(summary.pulled.revisionsRevoked == 4, "three revoked, one removed: \(summary.pulled)")
        #expect(analyzer.timeline(docID: "marker").contains { $0.kind == .revSent })
    }

    // MARK: Authentication

    /// With GUEST disabled, a client without credentials is refused 401, directly and through
    /// the relay alike.
    @Test(arguments: SyncGateway.binaries)
    func guestDisabledRefusesAnAnonymousClient(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary, guest: false)
        defer { gateway.cleanUp() }
        try await gateway.put([["_id": "private", "n": 1]])
        let relayed = try await Self.relay(to: gateway)
        let direct = try cblite.run(["pull", try cblite.database("direct"), gateway.url])
        let through = try cblite.run(["pull", try cblite.database("relayed"), relayed.url])
        #expect(direct.status != 0 && direct.status == through.status, "\(direct.output) / \(through.output)")
        #expect(direct.output.contains("/401)") && through.output.contains("/401)"), "\(direct.output) / \(through.output)")
        #expect(relayed.events.refusals.map(\.status.code) == [401])
        #expect(relayed.events.summaries.isEmpty, "no session opened")
        try await relayed.shutdown()
    }

    /// A Sync Gateway session (minted with the admin API's `POST /db/_session`) lets cblite pull
    /// with `--token` (a `SyncGatewaySession` cookie) through the relay as directly; a bogus
    /// token and a deleted session are refused the same way both ways; and neither the token nor
    /// a Basic password ever reaches the relay's capture or its log.
    @Test(arguments: SyncGateway.binaries)
    func sessionTokensAsDirectAndNeverInTheCaptureOrLog(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let gateway = try await SyncGateway(binary: binary, guest: false, users: ["alice": "letmein-s3cret"])
        defer { gateway.cleanUp() }
        try await gateway.put((0..<5).map { ["_id": "doc\($0)", "n": $0] })
        let minted = try await gateway.send("POST", "/db/_session", json: ["name": "alice", "ttl": 600])
        let session = try #require((try JSONSerialization.jsonObject(with: Data(minted.body.utf8)) as? [String: Any])?["session_id"] as? String,
                                   "\(minted)")
        let capture = cblite.directory.appendingPathComponent("capture").path
        let log = LogLines()
        var logger = Logger(label: "relay.log") { _ in log }
        logger.logLevel = .trace
        let relayed = try await Self.relay(to: gateway, capture: capture,
                                           observers: [LoggingObserver(logger: logger, format: .json)])

        var outcomes: [[String]] = []
        for (tag, url) in [("direct", gateway.url), ("relayed", relayed.url)] {
            let local = try cblite.database("token-\(tag)")
            let pulled = try cblite.run(["pull", "--token", session, local, url])
            let bogus = try cblite.run(["pull", "--token", "0123456789abcdef0123456789abcdef01234567", try cblite.database("bogus-\(tag)"), url])
            outcomes.append([String(pulled.status), SyncGatewayTests.completed(pulled.output), String(bogus.status),
                             bogus.output.contains("Session Invalid") && bogus.output.contains("/401)") ? "401 Session Invalid" : bogus.output]
                            + (try cblite.documentIDs(local)))
        }
        #expect(outcomes[0] == outcomes[1], "\(outcomes)")
        #expect(outcomes[0].first == "0" && outcomes[0].suffix(5) == ["doc0", "doc1", "doc2", "doc3", "doc4"], "\(outcomes[0])")

        // A session deleted (as one expires) is refused the same way both ways.
        let deleted = try await gateway.send("DELETE", "/db/_session/\(session)", json: nil)
        #expect(deleted.status / 100 == 2, "\(deleted)")
        let gone = try [gateway.url, relayed.url].map { try cblite.run(["pull", "--token", session, try cblite.database("gone-\($0.hashValue)"), $0]) }
        #expect(gone[0].status != 0 && gone[0].status == gone[1].status && gone.allSatisfy { $0.output.contains("/401)") },
                "\(gone.map(\.output))")
        let basic = try cblite.run(["pull", "--user", "alice:letmein-s3cret", try cblite.database("basic"), relayed.url])
        #expect(basic.status == 0, "\(basic.output.suffix(300))")

        await relayed.events.wait { $0.summaries.count == 2 }
        Self.expectNoFalseFindings(relayed.events)
        #expect(relayed.events.summaries.map(\.info.user) == ["cookie:SyncGatewaySession", "alice"])
        #expect(relayed.events.refusals.map(\.status.code) == [401, 401])
        try await relayed.shutdown()

        let secrets = [session, "letmein-s3cret", Data("alice:letmein-s3cret".utf8).base64EncodedString()]
        let files = try FileManager.default.subpathsOfDirectory(atPath: capture)
        #expect(!files.isEmpty)
        for file in files {
            var isDirectory: ObjCBool = false
            let path = (capture as NSString).appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds a secret") }
        }
        let lines = log.all.joined(separator: "\n")
        #expect(lines.contains("SyncGatewaySession"), "the log names the cookie")
        for secret in secrets { #expect(!lines.contains(secret), "the relay's log holds a secret") }
    }

    // MARK: Named collections

    /// SG with the named collections `sc.c1` and `sc.c2` (some document IDs in both): cblite
    /// pushes both collections in one replication and pulls them back into a new database,
    /// directly and through the relay alike, and the relay counts and follows each document in
    /// its own collection.
    @Test(arguments: SyncGateway.binaries)
    func namedCollectionsPushAndPullAsDirect(binary: String) async throws {
        let cblite = try CBLite()
        defer { cblite.cleanUp() }
        let collections = ["sc.c1", "sc.c2"]
        let contents: [String: [String]] = ["sc.c1": (0..<3).map { "shared-\($0)" } + (0..<4).map { "only1-\($0)" },
                                            "sc.c2": (0..<3).map { "shared-\($0)" } + ["only2-0"]]
        let direct = try await SyncGateway(binary: binary, collections: collections)
        let relayedGateway = try await SyncGateway(binary: binary, collections: collections)
        defer { direct.cleanUp(); relayedGateway.cleanUp() }
        let relayed = try await Self.relay(to: relayedGateway)
        var outcomes: [[String]] = []
        for (tag, gateway, url) in [("direct", direct, direct.url), ("relayed", relayedGateway, relayed.url)] {
            let source = try cblite.collectionDatabase("source-\(tag)", collections: collections)
            for (collection, ids) in contents {
                for id in ids { try cblite.put(id, json: "{\"in\":\"\(collection)\"}", into: source, collection: collection) }
            }
            let flags = collections.flatMap { ["--collection", $0] }
            let pushed = try cblite.run(["push"] + flags + [source, url])
            #expect(pushed.status == 0, "\(tag): \(pushed.output.suffix(300))")
            let copy = try cblite.collectionDatabase("copy-\(tag)", collections: collections)
            let pulled = try cblite.run(["pull"] + flags + [copy, url])
            #expect(pulled.status == 0, "\(tag): \(pulled.output.suffix(300))")
            var outcome = [SyncGatewayTests.completed(pushed.output), SyncGatewayTests.completed(pulled.output)]
            for collection in collections {
                let onGateway = try await Self.stored(gateway, keyspace: "db.\(collection)")
                let onClient = try cblite.documentIDs(copy, collection: collection)
                #expect(onGateway == contents[collection]!.sorted() && onClient == onGateway, "\(tag) \(collection): \(onGateway) / \(onClient)")
                outcome += [collection] + onClient
            }
            outcomes.append(outcome)
        }
        #expect(outcomes[0] == outcomes[1], "\(outcomes)")

        await relayed.events.wait { $0.summaries.count == 2 }
        Self.expectNoFalseFindings(relayed.events)
        let total = contents.values.map(\.count).reduce(0, +)
        let summaries = relayed.events.summaries.compactMap(\.replication)
        for summary in summaries {
            #expect(summary.collectionMode == "collectionAware" && summary.collections == collections, "\(summary.collections)")
        }
        #expect(summaries.map(\.pushed.documents) == [total, 0] && summaries.map(\.pulled.documents) == [0, total],
                "one document per collection and ID: \(summaries.map(\.pushed.documents)) \(summaries.map(\.pulled.documents))")
        // Each event of a document names its collection: shared-0 went both ways in both collections.
        for session in relayed.events.summaries {
            let analyzer = try #require(session.info.analyzer)
            let events = analyzer.timeline(docID: "shared-0")
            #expect(Set(events.compactMap(\.collection)) == Set(collections) && !events.contains { $0.collection == nil },
                    "\(events.map { "\($0.collection ?? "?") \($0.summary)" })")
            #expect(analyzer.timeline(docID: "only2-0").allSatisfy { $0.collection == "sc.c2" })
        }
        try await relayed.shutdown()
    }

    // MARK: Connected Client

    /// The Connected Client profiles, spoken by a BLIP client of this repository: `getRev` of a
    /// document, of one unchanged (`ifNotRev`: 304) and of a missing one (404), `putRev` of a new
    /// document and of a stale revision (409), and `subChanges` with `future=true` (only what is
    /// written from now on). SG answers the same directly and through the relay, and the relay
    /// reads SG's answers without a violation or a finding.
    @Test(arguments: SyncGateway.binaries)
    func connectedClientAsDirect(binary: String) async throws {
        var transcripts: [[String]] = []
        var relayedEvents: EventCounter?
        for tag in ["direct", "relayed"] {
            let gateway = try await SyncGateway(binary: binary)
            defer { gateway.cleanUp() }
            try await gateway.put([["_id": "existing", "n": 1]])
            let relayed = tag == "relayed" ? try await Self.relay(to: gateway) : nil
            transcripts.append(try await ConnectedClient.run(port: relayed?.port ?? gateway.publicPort, gateway: gateway))
            if let relayed {
                await relayed.events.wait { $0.summaries.count == 1 }
                relayedEvents = relayed.events
                try await relayed.shutdown()
            }
        }
        #expect(transcripts[0] == transcripts[1], "\(transcripts)")
        #expect(transcripts[0].contains { $0.hasPrefix("getRev existing: rev 1-") }, "\(transcripts[0])")
        let events = try #require(relayedEvents)
        Self.expectNoFalseFindings(events)
        let session = try #require(events.summaries.first)
        let analyzer = try #require(session.info.analyzer)
        #expect(analyzer.timeline(docID: "existing").map(\.kind).contains(.revReturned))
        #expect(analyzer.timeline(docID: "later").map(\.kind).contains(.offered), "subChanges since now offered the document written after it")
        #expect(analyzer.timeline(docID: "existing").filter { $0.kind == .offered }.isEmpty, "nothing from before the subscription")
    }
}

/// A Connected Client session: getRev, putRev and subChanges (future) over BLIP, answers
/// written down as a transcript to compare direct and relayed runs.
enum ConnectedClient {
    static func run(port: Int, gateway: SyncGateway) async throws -> [String] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let transcript = try await session(port: port, gateway: gateway, group: group)
            try await group.shutdownGracefully()
            return transcript
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func session(port: Int, gateway: SyncGateway, group: EventLoopGroup) async throws -> [String] {
        let offered = NIOLockedValueBox<[String]>([])
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = port
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        configuration.onRequest = { request, handler in
            guard request.profile == "changes" else { return }
            let text = String(buffer: request.body)
            if let rows = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] {
                offered.withLockedValue { $0 += rows.compactMap { $0.count > 1 ? $0[1] as? String : nil } }
            }
            // Not wanted: a connected client only listens.
            if !request.isNoReply {
                handler.sendReply(.reply(to: request, body: ByteBuffer(string: "[]")))
            }
        }
        guard case .connected(let connection) = try await BLIPWebSocketClient.connect(configuration, group: group) else {
            throw SyncGatewayFailure("Sync Gateway refused the Connected Client")
        }
        var transcript: [String] = ["subprotocol \(connection.subprotocol ?? "?")"]
        func ask(_ label: String, _ message: BLIPMessage) async throws -> BLIPMessage {
            let reply = try await connection.request(message)
            if reply.type == .error {
                transcript.append("\(label): ERR \(reply.properties["Error-Domain"] ?? "?") \(reply.properties["Error-Code"] ?? "?")")
            } else {
                transcript.append("\(label): rev \(reply.properties["rev"].map { String($0.prefix(2)) } ?? "-") \(String(buffer: reply.body))")
            }
            return reply
        }
        let existing = try await ask("getRev existing", .request(profile: "getRev", properties: ["id": "existing"]))
        let current = existing.properties["rev"] ?? ""
        _ = try await ask("getRev ifNotRev", .request(profile: "getRev", properties: ["id": "existing", "ifNotRev": current]))
        _ = try await ask("getRev missing", .request(profile: "getRev", properties: ["id": "nowhere"]))
        _ = try await ask("putRev new", .request(profile: "putRev", properties: ["id": "fresh", "rev": "1-" + String(repeating: "0a", count: 16)],
                                                 body: ByteBuffer(string: "{\"by\":\"connected client\"}")))
        _ = try await ask("putRev stale", .request(profile: "putRev", properties: ["id": "existing", "rev": "1-" + String(repeating: "0d", count: 16)],
                                                   body: ByteBuffer(string: "{\"n\":2}")))
        _ = try await ask("subChanges future", .request(profile: "subChanges", properties: ["future": "true", "continuous": "true"]))
        try await gateway.put([["_id": "later", "n": 3]])
        // Bounded: SG sends the new document's row as soon as it is written.
        for _ in 0..<300 where !offered.withLockedValue({ $0.contains("later") }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        transcript.append("offered \(offered.withLockedValue { $0 })")
        transcript.append("stored \(try await SyncGatewayAccessTests.stored(gateway))")
        try await connection.close()
        return transcript
    }
}

/// Log lines collected in memory, as the relay's `LoggingObserver` writes them.
final class LogLines: LogHandler, @unchecked Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        lines.withLockedValue { $0.append("\(event.message) \(event.metadata ?? [:])") }
    }
    var all: [String] { lines.withLockedValue { $0 } }
}

extension CBLite {
    /// A new database with the named collections (`scope.collection`) made in it.
    func collectionDatabase(_ name: String, collections: [String]) throws -> String {
        let path = try database(name)
        for collection in collections {
            let made = try run(["mkcoll", path, collection.replacingOccurrences(of: ".", with: "/")])
            guard made.status == 0 else { throw CBLiteFailure(made.output) }
        }
        return path
    }

    /// Writes one document into a named collection.
    func put(_ id: String, json: String, into database: String, collection: String) throws {
        let parts = collection.split(separator: ".").map(String.init)
        let written = try run(["put", "--scope", parts[0], "--collection", parts[1], database, id, json])
        guard written.status == 0 else { throw CBLiteFailure(written.output) }
    }

    /// The document IDs of a named collection.
    func documentIDs(_ database: String, collection: String) throws -> [String] {
        let parts = collection.split(separator: ".").map(String.init)
        let listed = try run(["ls", "--scope", parts[0], "--collection", parts[1], database])
        guard listed.status == 0 else { throw CBLiteFailure(listed.output) }
        return listed.output.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)
            .filter { $0 != "(No" && $0 != "documents)" }.sorted()
    }
}
