import BLIPCore
import Testing
@testable import Replication

/// What Sync Gateway sends about access (docs/sync-gateway-behaviour.md "Access"): changes rows
/// flagged revoked (2) or removed (4) are read as such, never as deletions; and in a session
/// with several named collections, a document ID in two collections is two documents.
@Suite("Sync Gateway access and collections")
struct SyncGatewayAccessAnalysisTests {
    /// SG's rows for a user who lost channel `b` (revoked, with the compound sequence of the
    /// grant change), a document moved out of the user's channels (removed), a tombstone, and a
    /// revoked tombstone.
    static let rows = #"[["9:3","b0","\#(revA1)",2],[10,"moved","\#(revA2)",4],[11,"gone","\#(revA3)",1],[12,"was","\#(revA3)",3]]"#

    @Test("revoked and removed rows are not deletions, on the fast path and the strict one alike")
    func flagsAreReadAsABitfield() {
        // An escaped character in a document ID sends the body down the strict (tree) path.
        let strict = Self.rows.replacingOccurrences(of: "\"moved\"", with: #""mov\u0065d""#)
        for body in [Self.rows, strict] {
            guard case .changes(let changes) = ReplicationMessage(request("changes", 1, body: body)).content else {
                Issue.record("not typed as changes")
                continue
            }
            #expect(changes.entries.map(\.docID) == ["b0", "moved", "gone", "was"])
            #expect(changes.entries.map(\.deleted) == [false, false, true, true])
            #expect(changes.entries.map(\.revoked) == [true, false, false, true])
            #expect(changes.entries.map(\.removed) == [false, true, false, false])
        }
        // CBMobile_2's bool, and LiteCore's own rows, are as before.
        guard case .changes(let old) = ReplicationMessage(request("changes", 1, body: #"[[1,"a","\#(revA1)",true],[2,"b","\#(revA1)",false]]"#)).content
        else {
            Issue.record("not typed as changes")
            return
        }
        #expect(old.entries.map(\.deleted) == [true, false] && !old.entries.contains { $0.revoked || $0.removed })
    }

    @Test("the timeline says revoked or removed, the summary counts them, and nothing is a violation")
    func revocationsOnTheTimeline() {
        let script = Script()
        script.client(request("subChanges", 1, [("continuous", "true"), ("revocations", "true")]))
        script.server(reply(1))
        let changes = script.server(request("changes", 1, body: Self.rows))
        #expect(changes.message.violations.isEmpty)
        // LiteCore wants none of them: it purges what it lost and already has the tombstones.
        script.client(reply(1, body: "[]"))

        let revoked = script.analyzer.timeline(docID: "b0")
        #expect(revoked.map(\.kind) == [.offered, .notWanted])
        #expect(revoked.allSatisfy { !$0.deleted && $0.note == "revoked: the user lost access to it" }, "\(revoked.map(\.summary))")
        let moved = script.analyzer.timeline(docID: "moved")
        #expect(moved.first?.note == "removed from the user's channels" && moved.first?.deleted == false)
        let gone = script.analyzer.timeline(docID: "gone")
        #expect(gone.first?.deleted == true && gone.first?.note == nil && gone.last?.note == "already known or filtered")
        #expect(script.analyzer.timeline(docID: "was").first?.deleted == true)

        let summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsRevoked == 3 && summary.pulled.revisionsOffered == 4 && summary.pulled.revisionsNotWanted == 4)
        #expect(summary.protocolViolations == 0 && script.analyzer.findings.isEmpty)
    }

    /// getCollections for `sc.c1` and `sc.c2`, then in each collection the same two document
    /// IDs pulled NoReply, and each collection's checkpoint saved.
    @Test("one ID in two collections is two documents, each kept by its own collection's checkpoint")
    func collectionsKeepTheirOwnDocuments() {
        let script = Script()
        script.client(request("getCollections", 1, body: #"{"collections":["sc.c1","sc.c2"],"checkpoint_ids":["cp-1","cp-1"]}"#))
        script.server(reply(1, body: "[{},{}]"))
        var number: MessageNumber = 2
        for collection in ["0", "1"] {
            script.client(request("subChanges", number, [("collection", collection)]))
            script.server(reply(number))
            number += 1
        }
        var serverNumber: MessageNumber = 1
        for collection in ["0", "1"] {
            script.server(request("changes", serverNumber, [("collection", collection)],
                                  body: #"[[1,"shared","\#(revA1)"],[2,"only-\#(collection)","\#(revA1)"]]"#))
            script.client(reply(serverNumber, body: "[[],[]]"))
            serverNumber += 1
            for (sequence, doc) in ["shared", "only-\(collection)"].enumerated() {
                script.server(request("rev", serverNumber, [("collection", collection), ("id", doc), ("rev", revA1),
                                                            ("sequence", "\(sequence + 1)")], body: "{}", noReply: true))
                serverNumber += 1
            }
        }
        var summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsSent == 4 && summary.pulled.revisionsUnconfirmed == 4, "\(summary.pulled)")

        // The first collection's checkpoint keeps its own two documents only.
        script.client(request("setCheckpoint", number, [("collection", "0"), ("client", "cp-1")], body: #"{"remote":2}"#))
        script.server(reply(number, [("rev", "0-1")]))
        summary = script.analyzer.summary()
        #expect(summary.pulled.documents == 2 && summary.pulled.revisionsUnconfirmed == 2, "\(summary.pulled)")
        script.client(request("setCheckpoint", number + 1, [("collection", "1"), ("client", "cp-1")], body: #"{"remote":2}"#))
        script.server(reply(number + 1, [("rev", "0-1")]))
        summary = script.analyzer.summary()
        #expect(summary.pulled.documents == 4 && summary.pulled.revisionsKept == 4 && summary.pulled.revisionsUnconfirmed == 0,
                "\(summary.pulled)")
        #expect(summary.protocolViolations == 0 && script.analyzer.findings.isEmpty)

        let shared = script.analyzer.timeline(docID: "shared")
        #expect(shared.filter { $0.kind == .revKept }.compactMap(\.collection) == ["sc.c1", "sc.c2"])
        #expect(shared.allSatisfy { $0.collection != nil }, "\(shared.map(\.summary))")
        #expect(script.analyzer.timeline(docID: "only-1").allSatisfy { $0.collection == "sc.c2" })
    }

    @Test("in a legacy session events name no collection")
    func legacyEventsNameNone() {
        let script = Script()
        SyncGatewayPullTests.pull(["a"], in: script)
        #expect(script.analyzer.timeline(docID: "a").allSatisfy { $0.collection == nil })
    }
}
