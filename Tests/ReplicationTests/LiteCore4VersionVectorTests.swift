import BLIPCore
import Testing
@testable import Replication

/// CBMobile_4 sessions as LiteCore 4 makes them (docs/litecore-behaviour.md "Version vectors"):
/// proposeChanges entries carry whole vectors, revs a current version and the rest of the vector
/// as `history`, a conflict names the peer's current version. Read without false findings.
@Suite("LiteCore 4 version vectors")
struct LiteCore4VersionVectorTests {
    static let gateway = "18eb16f1434e0000@aWSLtmICS2u3fF0LDFcMJA"
    static let mine = "18eb16f22aff0000@Le0TxfRbSKiiz2wYy+3+Jg"
    static let theirs = "18eb16f240ba0000@MD0TR/POQ8mxkUCZrVhu9g"

    @Test("a proposed vector is known by its current version, the vector kept")
    func proposedVector() throws {
        let entry = ProposeChangesRequest.Entry(docID: "d", revID: "\(Self.mine); \(Self.gateway)", serverRevID: Self.gateway)
        #expect(entry.revID == Self.mine && entry.vector == "\(Self.mine); \(Self.gateway)")
        #expect(entry.serverRevID == Self.gateway)
        #expect(ProposeChangesRequest.Entry(docID: "d", revID: Self.mine).vector == nil)
        let parsed = try VersionVector.parse("\(Self.mine), \(Self.theirs), \(Self.gateway);", omitsCurrent: false).get()
        #expect(parsed.merges.count == 2 && parsed.history.isEmpty)
        #expect(parsed.text == "\(Self.mine), \(Self.theirs), \(Self.gateway);")
        #expect(try RevID.parse("\(Self.mine); \(Self.gateway)", versioning: .versionVectors).get().description == Self.mine)
        #expect(try RevID.parse(revA1, versioning: .versionVectors).get() == .tree(TreeRevID.parse(revA1).get()),
                "documents last written by a rev-tree peer keep their rev-tree IDs")
        // The current version's source may be merged once more (an older version of its own).
        let own = "18eb16f10000000@Le0TxfRbSKiiz2wYy+3+Jg"
        #expect((try? VersionVector.parse("\(Self.mine), \(own), \(Self.theirs); \(Self.gateway)", omitsCurrent: false).get()) != nil)
        #expect((try? VersionVector.parse("\(Self.mine); \(own)", omitsCurrent: false).get()) == nil)
    }

    @Test("a LiteCore 4 push with a conflict: one conflict, no violation, nothing stuck")
    func pushWithConflict() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp-vv")]))
        script.server(errorReply(1, code: 404, message: "missing"))
        let proposal = script.client(request("proposeChanges", 2, [("conflictIncludesRev", "true")], body: """
            [["a","\(Self.mine)","",7],["b","\(Self.mine); \(Self.gateway)","\(Self.gateway)",8]]
            """))
        #expect(proposal.message.violations.isEmpty)
        let answer = script.server(reply(2, body: #"[0,{"rev":"\#(Self.theirs)","status":409}]"#))
        #expect(answer.message.violations.isEmpty)
        #expect(answer.summary == "proposeChanges 2 → 1×send 1×409")
        let rev = script.client(request("rev", 3, [("id", "a"), ("rev", Self.mine), ("sequence", "1"),
                                                   ("noconflicts", "1")], body: #"{"v":1}"#))
        #expect(rev.message.violations.isEmpty)
        script.server(reply(3))
        script.client(request("setCheckpoint", 4, [("client", "cp-vv"), ("rev", "")], body: #"{"local":2}"#))
        script.server(reply(4, [("rev", "0-1")]))
        let summary = script.analyzer.summary()
        #expect(summary.conflicts == 1 && summary.protocolViolations == 0)
        #expect(summary.pushed.revisionsProposed == 2 && summary.pushed.revisionsWanted == 1)
        #expect(summary.pushDone == true)
        #expect(script.analyzer.stuckFindings(now: .infinity).isEmpty)
        #expect(script.analyzer.findings.isEmpty)
    }

    @Test("a version-vector pull: versions in changes, the vector's rest in history")
    func versionVectorPull() {
        let script = Script()
        let sub = script.client(request("subChanges", 1, [("versioning", "version-vectors")]))
        #expect(sub.message.violations.isEmpty)
        script.server(reply(1))
        script.server(request("changes", 1, body: #"[[3,"d","\#(Self.mine)",0,7],[4,"e","\#(revA1)",0,2]]"#))
        script.client(reply(1, [("blobs", "true"), ("deltas", "true")], body: "[[],[]]"))
        let rev = script.server(request("rev", 2, [("id", "d"), ("rev", Self.mine), ("sequence", "3"),
                                                   ("history", "\(Self.theirs), \(Self.gateway)")], body: #"{"v":1}"#))
        #expect(rev.message.violations.isEmpty)
        script.client(reply(2))
        script.server(request("rev", 3, [("id", "e"), ("rev", revA1), ("sequence", "4")], body: "{}"))
        script.client(reply(3))
        script.server(request("changes", 4, body: "[]", noReply: true))
        let summary = script.analyzer.summary()
        #expect(summary.versioning == "version-vectors")
        #expect(summary.pulled.revisionsWanted == 2 && summary.pullCaughtUp == true)
        #expect(summary.protocolViolations == 0)
        #expect(script.analyzer.stuckFindings(now: .infinity).isEmpty)
    }
}
