import BLIPCore
import BLIPNIO
import Foundation
@testable import Gateway
import NIOConcurrencyHelpers
import NIOCore
import Replication
import Testing

/// CBMobile_4 as LiteCore 4 speaks it to the gateway (docs/litecore-behaviour.md "Version
/// vectors"): proposals carry whole vectors, revs a current version and the rest of the vector
/// as `history`, and the gateway decides on versions as Sync Gateway 4 does.
@Suite struct VersionVectorTests {
    // Two LiteCore databases and a third peer, by their 22-character source IDs.
    static let alice = "Le0TxfRbSKiiz2wYy+3+Jg"
    static let bob = "MD0TR/POQ8mxkUCZrVhu9g"
    static let carol = "aWSLtmICS2u3fF0LDFcMJA"

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// A version-vector revision as a rev message brings it.
    static func incoming(_ docID: String, _ version: String, history: String = "", deleted: Bool = false,
                         body: String = #"{"v":1}"#) -> IncomingRevision {
        IncomingRevision(docID: docID, revID: version, deleted: deleted, body: Self.body(body), versionHistory: history)
    }

    // MARK: decisions, without sockets

    @Test func aPushedVersionIsStoredAsSentAndNamedByARevTreeIDForOlderPeers() throws {
        let database = GatewayDatabase(name: "db")
        let outcome = try database.insert(Self.incoming("d", "18eb16eca53a0000@\(Self.alice)"), noConflicts: true)
        #expect(outcome == .added(sequence: 1))
        let document = try #require(database.document("d"))
        #expect(document.currentVersion?.current == "18eb16eca53a0000@\(Self.alice)")
        #expect(document.currentVersion?.history == "")
        #expect(document.currentRevID.hasPrefix("1-"), "rev-tree peers see a first revision")

        // Alice edits again, having also pulled a version Carol made elsewhere: `cv; pv` as
        // LiteCore writes it. Her new version supersedes her old one, so it succeeds.
        let edited = Self.incoming("d", "18eb16f22aff0000@\(Self.alice)", history: "18eb16eca53a0001@\(Self.carol)")
        #expect(try database.insert(edited, noConflicts: true) == .added(sequence: 2))
        let after = try #require(database.document("d"))
        #expect(after.currentVersion?.current == "18eb16f22aff0000@\(Self.alice)")
        #expect(after.currentVersion?.history == "18eb16eca53a0001@\(Self.carol)", "kept exactly as sent")
        #expect(after.currentRevID.hasPrefix("2-") && after.history == [document.currentRevID])

        // The same version again, or an older one of the same source, is already known.
        #expect(try database.insert(edited, noConflicts: true) == .alreadyKnown)
        #expect(try database.insert(Self.incoming("d", "18eb16eca53a0000@\(Self.alice)"), noConflicts: true) == .alreadyKnown)
    }

    @Test func aVersionThatDoesNotDescendIsAConflictEvenWhereConflictsAreAllowed() throws {
        let database = GatewayDatabase(name: "db")
        try database.insert(Self.incoming("d", "100000@\(Self.alice)"))
        try database.insert(Self.incoming("d", "200000@\(Self.alice)"))
        // Bob edited Alice's first version: his vector knows 100000@alice, not 200000@alice.
        let bobs = Self.incoming("d", "300000@\(Self.bob)", history: "100000@\(Self.alice)")
        #expect(database.conflict(for: bobs, in: GatewayDatabase.defaultCollection, noConflicts: false) != nil)
        #expect(throws: GatewayError.self) { try database.insert(bobs, noConflicts: false) }
        // Once Bob has pulled Alice's second version, his edit descends from it.
        let merged = Self.incoming("d", "400000@\(Self.bob)", history: "200000@\(Self.alice)")
        #expect(try database.insert(merged, noConflicts: true) == .added(sequence: 3))
        // A tombstone may be built on by anyone.
        try database.insert(Self.incoming("d", "500000@\(Self.bob)", history: "200000@\(Self.alice)", deleted: true,
                                          body: "{}"))
        #expect(try database.insert(Self.incoming("d", "600000@\(Self.carol)"), noConflicts: true) == .added(sequence: 5))
    }

    @Test func proposalsAreDecidedOnVersionsAsSyncGateway4Does() throws {
        let database = GatewayDatabase(name: "db")
        try database.insert(Self.incoming("d", "200000@\(Self.alice)", history: "100000@\(Self.carol)"))
        func propose(_ vector: String, server: String? = nil) -> (Int, String?) {
            let entry = ProposeChangesRequest.Entry(docID: "d", revID: vector, serverRevID: server)
            let answer = database.proposal(docID: "d", revID: entry.revID, vector: entry.vector,
                                           serverRevID: entry.serverRevID, in: GatewayDatabase.defaultCollection)
            return (answer.status, answer.current)
        }
        #expect(database.proposal(docID: "new", revID: "1@\(Self.bob)", vector: nil, serverRevID: nil,
                                  in: GatewayDatabase.defaultCollection).status == 0)
        #expect(propose("200000@\(Self.alice)") == (304, nil), "the current version")
        #expect(propose("100000@\(Self.carol)") == (304, nil), "an ancestor the vector holds")
        #expect(propose("300000@\(Self.bob); 200000@\(Self.alice)", server: "200000@\(Self.alice)") == (0, nil))
        #expect(propose("300000@\(Self.bob); 200000@\(Self.alice), 100000@\(Self.carol)") == (0, nil),
                "no server version named, but the vector succeeds the current one")
        #expect(propose("300000@\(Self.bob); 100000@\(Self.carol)", server: "100000@\(Self.carol)")
                == (409, "200000@\(Self.alice)"), "a conflict names the current version")
        #expect(propose("250000@\(Self.alice); 100000@\(Self.carol)") == (0, nil), "the same source, later")
    }

    @Test func aRevTreeDocumentIsSucceededThroughItsLegacyVersion() throws {
        let database = GatewayDatabase(name: "db")
        let tree = "2-" + String(repeating: "ab", count: 20)
        try database.insert(IncomingRevision(docID: "d", revID: tree, history: ["1-" + String(repeating: "cd", count: 20)],
                                             body: Self.body("{}")))
        let legacy = Version.legacy(try TreeRevID.parse(tree).get())
        #expect(legacy.description == "2ababababab@Revision+Tree+Encoding")
        // LiteCore 4 edits a pulled rev-tree revision: the legacy version enters its vector.
        let edit = Self.incoming("d", "18eb16f22aff0000@\(Self.alice)", history: legacy.description)
        #expect(database.proposal(docID: "d", revID: edit.revID, vector: edit.vector?.text, serverRevID: tree,
                                  in: GatewayDatabase.defaultCollection).status == 0)
        #expect(try database.insert(edit, noConflicts: true) == .added(sequence: 2))
        let unrelated = Self.incoming("e", "1@\(Self.bob)")
        try database.insert(IncomingRevision(docID: "e", revID: tree, body: Self.body("{}")))
        #expect(throws: GatewayError.self) { try database.insert(unrelated, noConflicts: true) }
    }

    @Test func localEditsGetVersionsOfTheGatewaysOwn() throws {
        let database = GatewayDatabase(name: "db")
        try database.put("d", body: ["v": .number("1")])
        let first = try #require(database.document("d")?.currentVersion)
        let version = try Version.parse(Substring(first.current)).get()
        #expect(String(version.sourceID) == database.sourceID && database.sourceID.count == 22)
        #expect(first.history.isEmpty)
        // Alice edits the gateway's version; the gateway edits hers: her version moves to the history.
        try database.insert(Self.incoming("d", "\(String(version.timestamp + 1, radix: 16))@\(Self.alice)",
                                          history: first.current), noConflicts: true)
        try database.put("d", body: ["v": .number("3")])
        let third = try #require(database.document("d")?.currentVersion)
        let vector = try #require(third.vector)
        #expect(vector.current?.sourceID == Substring(database.sourceID))
        #expect(vector.current!.timestamp > version.timestamp + 1)
        #expect(vector.history.map { String($0.sourceID) } == [Self.alice], "the gateway's own older version is dropped")
        // A document seeded before any vector peer, then deleted: each step has a version.
        try database.delete("d")
        #expect(database.document("d")?.currentVersion != nil)
    }

    @Test func aVersionVectorFeedNamesVersionsAndSendsTheHistoryAsStored() throws {
        let database = GatewayDatabase(name: "db")
        try database.insert(Self.incoming("d", "200000@\(Self.alice)", history: "150000@\(Self.bob), 100000@\(Self.carol)"))
        let (entries, _) = database.changes(in: GatewayDatabase.defaultCollection, since: 0, limit: 10, filter: ChangesFilter())
        let entry = try #require(entries.first)
        #expect(String(buffer: RevisionSender.changesBody(entries, versions: true))
                == #"[[1,"d","200000@\#(Self.alice)",0,7]]"#)
        #expect(String(buffer: RevisionSender.changesBody(entries)).contains(#""1-"#), "rev-tree pulls see the tree")
        let outgoing = try #require(database.outgoingRevision(docID: "d", revID: entry.revID, in: GatewayDatabase.defaultCollection,
                                                              knownAncestors: [], maxHistory: 20))
        let rev = RevisionSender.revMessage(docID: "d", outgoing, collectionIndex: nil, versions: true)
        #expect(rev.properties["rev"] == "200000@\(Self.alice)")
        #expect(rev.properties["history"] == "150000@\(Self.bob), 100000@\(Self.carol)")
        let treeRev = RevisionSender.revMessage(docID: "d", outgoing, collectionIndex: nil)
        #expect(treeRev.properties["rev"] == entry.revID && treeRev.properties["history"] == nil)
    }

    @Test func theSubprotocolVersionIsReadFromItsName() {
        #expect(GatewayHandshake.protocolVersion(of: "BLIP_3+CBMobile_4") == 4)
        #expect(GatewayHandshake.protocolVersion(of: "BLIP_3+CBMobile_2") == 2)
        #expect(GatewayHandshake.protocolVersion(of: nil) == 3)
    }

    // MARK: through a socket

    /// A hand-driven LiteCore 4: pushes with proposeChanges and revs shaped as LiteCore 4's, then
    /// pulls with `versioning=version-vectors` and answers the changes as LiteCore 4 does.
    @Test func aLiteCore4ShapedPushAndPullOverCBMobile4() async throws {
        try await withGateway(seed: { try $0.put("seeded", body: ["v": .number("0")]) }) { gateway in
            let received = NIOLockedValueBox<[BLIPMessage]>([])
            let (caughtUp, signal) = AsyncStream<Void>.makeStream()
            var client = BLIPWebSocketClient.Configuration()
            client.host = "127.0.0.1"
            client.port = gateway.server.port
            client.path = "/db/_blipsync"
            client.subprotocols = ["BLIP_3+CBMobile_4"]
            client.onRequest = { request, handler in
                if request.profile == "changes" {
                    // The caught-up changes: `null`, as Sync Gateway sends it.
                    if String(buffer: request.body) == "null" { signal.yield() }
                    let count = (String(buffer: request.body).components(separatedBy: "],[").count)
                    let wanted = String(buffer: request.body) == "null" ? "" : Array(repeating: "[]", count: count).joined(separator: ",")
                    if !request.isNoReply {
                        handler.sendReply(.reply(to: request, properties: ["blobs": "true", "deltas": "true"],
                                                 body: ByteBuffer(string: "[\(wanted)]")))
                    }
                } else {
                    received.withLockedValue { $0.append(request) }
                    if !request.isNoReply { handler.sendReply(.reply(to: request)) }
                }
            }
            guard case .connected(let connection) = try await BLIPWebSocketClient.connect(client, group: gateway.group) else {
                Issue.record("not connected")
                return
            }
            #expect(connection.subprotocol == "BLIP_3+CBMobile_4")
            let seeded = try #require(gateway.database.document("seeded")?.currentVersion?.current)
            let mine = "18eb16f22aff0000@\(Self.alice)"
            let proposal = #"[["fresh","\#(mine)","",7],["seeded","\#(mine); \#(seeded)","\#(seeded)",7]]"#
            let answer = try await connection.request(.request(profile: "proposeChanges",
                                                               properties: ["conflictIncludesRev": "true"],
                                                               body: ByteBuffer(string: proposal)))
            #expect(String(buffer: answer.body) == "[]", "both wanted")
            for (id, history) in [("fresh", ""), ("seeded", seeded)] {
                var properties: Properties = ["id": id, "rev": mine, "sequence": "1", "noconflicts": "1"]
                if !history.isEmpty { properties["history"] = history }
                let stored = try await connection.request(.request(profile: "rev", properties: properties,
                                                                   body: ByteBuffer(string: #"{"v":"A"}"#)))
                #expect(stored.type == .response)
            }
            #expect(gateway.database.document("seeded")?.currentVersion?.history == seeded)

            let sub = try await connection.request(.request(profile: "subChanges",
                                                            properties: ["versioning": "version-vectors"]))
            #expect(sub.type == .response)
            // Every rev arrives before the caught-up changes (the feed waits for the answers first).
            for await _ in caughtUp { break }
            let revs = received.withLockedValue { $0 }.filter { $0.profile == "rev" }
            #expect(Set(revs.map { $0.properties["rev"] }) == [mine])
            #expect(revs.first { $0.properties["id"] == "seeded" }?.properties["history"] == seeded)
            try await connection.close()
        }
    }

}
