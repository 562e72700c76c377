import BLIPCore
import Testing
@testable import Replication

/// A pull from Sync Gateway as it makes it (docs/sync-gateway-behaviour.md): the caught-up
/// `changes` has the body `null`, the revs the client asked for come NoReply, and a
/// getAttachment for a rev whose allowance is gone is refused with 403.
@Suite("Sync Gateway pull")
struct SyncGatewayPullTests {
    static let notSynced = "Attachment's doc not being synced"

    /// subChanges, one batch of `docs` (sequences 1…), wanted whole, and their NoReply revs.
    static func pull(_ docs: [String], in script: Script) {
        script.client(request("subChanges", 1))
        script.server(reply(1))
        let entries = docs.enumerated().map { "[\($0.offset + 1),\"\($0.element)\",\"\(revA1)\"]" }
        script.server(request("changes", 1, body: "[" + entries.joined(separator: ",") + "]"))
        script.client(reply(1, body: "[" + docs.map { _ in "[]" }.joined(separator: ",") + "]"))
        for (index, doc) in docs.enumerated() {
            script.server(request("rev", MessageNumber(index + 2), [("id", doc), ("rev", revA1), ("sequence", "\(index + 1)")],
                                  body: "{}", noReply: true))
        }
    }

    @Test("the caught-up changes with the body null is read as caught up, not as a violation")
    func nullCaughtUp() {
        let script = Script()
        script.client(request("subChanges", 1))
        script.server(reply(1))
        let caughtUp = script.server(request("changes", 1, body: "null", noReply: true))
        #expect(caughtUp.message.violations.isEmpty)
        guard case .changes(let changes) = caughtUp.message.content else { return #expect(Bool(false), "not typed as changes") }
        #expect(changes.isCaughtUp)
        let summary = script.analyzer.summary()
        #expect(summary.pullCaughtUp == true && summary.protocolViolations == 0)
        #expect(script.analyzer.findings.isEmpty)
    }

    @Test("a body that is neither an array nor null is still a violation")
    func otherBodyIsAViolation() {
        let script = Script()
        let changes = script.server(request("changes", 1, body: "{\"results\":[]}"))
        #expect(changes.message.violations.count == 1)
    }

    @Test("NoReply revs are sent, not pulled, until a checkpoint saved after them shows them kept")
    func noReplyRevsKeptByACheckpoint() {
        let script = Script()
        Self.pull(["a", "b", "c"], in: script)
        var summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsSent == 3 && summary.pulled.revisionsUnconfirmed == 3)
        #expect(summary.pulled.documents == 0 && summary.pulled.revisionsStored == 0)
        #expect(script.analyzer.timeline(docID: "a").last?.kind == .revSent)

        // The checkpoint covers sequences up to 2 only: "c" (sequence 3) stays unconfirmed.
        script.client(request("setCheckpoint", 2, [("client", "cp-1")], body: "{\"remote\":2}"))
        script.server(reply(2, [("rev", "0-1")]))
        summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsKept == 2 && summary.pulled.revisionsStored == 2 && summary.pulled.documents == 2)
        #expect(summary.pulled.revisionsUnconfirmed == 1)
        #expect(script.analyzer.timeline(docID: "a").last?.kind == .revKept)
        #expect(script.analyzer.timeline(docID: "c").last?.kind == .revSent)

        script.client(request("setCheckpoint", 3, [("client", "cp-1"), ("rev", "0-1")], body: "{\"remote\":3}"))
        script.server(reply(3, [("rev", "0-2")]))
        summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsKept == 3 && summary.pulled.documents == 3 && summary.pulled.revisionsUnconfirmed == 0)
    }

    @Test("a checkpoint that failed, or was sent before the rev arrived, keeps nothing")
    func onlyASavedLaterCheckpointKeeps() {
        let script = Script()
        script.client(request("setCheckpoint", 5, [("client", "cp-1")], body: "{\"remote\":9}"))
        Self.pull(["a"], in: script)
        script.server(reply(5, [("rev", "0-1")]))  // answers the checkpoint sent before the rev
        script.client(request("setCheckpoint", 6, [("client", "cp-1"), ("rev", "0-0")], body: "{\"remote\":9}"))
        script.server(errorReply(6, code: 409, message: "Document update conflict"))
        let summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsKept == 0 && summary.pulled.revisionsUnconfirmed == 1)
    }

    /// The issue's pull: four documents, `withblob` with an attachment SG no longer allows.
    @Test("a refused getAttachment marks its document not stored, with SG's reason, in the summary, a finding and the timeline")
    func refusedAttachmentIsNotStored() {
        let script = Script()
        Self.pull(["doc1", "doc2", "doc3", "withblob"], in: script)
        script.client(request("getAttachment", 2, [("docID", "withblob"), ("digest", "sha1-abc")]))
        let refusal = script.server(errorReply(2, code: 403, message: Self.notSynced))
        #expect(refusal.findings.map(\.kind) == [.revisionNotStored])
        let finding = refusal.findings.first
        #expect(finding?.docID == "withblob" && finding?.side == .serverToClient)
        #expect(finding?.message.contains("HTTP 403") == true && finding?.message.contains(Self.notSynced) == true)
        #expect(script.analyzer.timeline(docID: "withblob").last?.kind == .revNotStored)
        #expect(script.analyzer.timeline(docID: "withblob").last?.note?.contains(Self.notSynced) == true)

        script.client(request("setCheckpoint", 3, [("client", "cp-1")], body: "{\"remote\":4}"))
        script.server(reply(3, [("rev", "0-1")]))
        let summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsSent == 4 && summary.pulled.documents == 3 && summary.pulled.revisionsStored == 3)
        #expect(summary.pulled.revisionsNotStored == 1 && summary.pulled.revisionsUnconfirmed == 0)
        #expect(summary.errorsByDomainAndCode == ["HTTP 403": 1])
        #expect(summary.findings.map(\.kind) == [.revisionNotStored])
    }

    @Test("a refusal after the rev was accepted takes the document back out of what was stored")
    func refusalAfterAcceptance() {
        let script = Script()
        script.server(request("rev", 1, [("id", "withblob"), ("rev", revA1), ("sequence", "1")], body: "{}"))
        script.client(reply(1))
        #expect(script.analyzer.summary().pulled.documents == 1)
        script.client(request("getAttachment", 1, [("docID", "withblob"), ("digest", "sha1-abc")]))
        script.server(errorReply(1, code: 403, message: Self.notSynced))
        let summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsAccepted == 1 && summary.pulled.revisionsStored == 0 && summary.pulled.documents == 0)
        #expect(summary.pulled.revisionsNotStored == 1)
    }

    /// SG's rev with an attachment awaits its reply; its body also names a blob not among its
    /// attachments, which SG refuses: LiteCore refuses the rev, and that reply is the account.
    @Test("a refused getAttachment for a rev awaiting its reply is counted once, by the rev's refusal")
    func refusalWhileTheRevAwaitsItsReply() {
        let script = Script()
        script.server(request("rev", 1, [("id", "mixed"), ("rev", revA1), ("sequence", "1")],
                              body: #"{"_attachments":{"a.txt":{"digest":"sha1-a","length":5,"revpos":1,"stub":true}}}"#))
        script.client(request("getAttachment", 1, [("docID", "mixed"), ("digest", "sha1-other")]))
        let refusal = script.server(errorReply(1, code: 403, message: Self.notSynced))
        #expect(refusal.findings.isEmpty)
        #expect(script.analyzer.timeline(docID: "mixed").last?.kind == .revNotStored)
        #expect(script.analyzer.timeline(docID: "mixed").last?.revID == revA1)
        script.client(errorReply(1, code: 403, message: Self.notSynced))
        let summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsSent == 1 && summary.pulled.revisionsRefused == 1)
        #expect(summary.pulled.revisionsNotStored == 0 && summary.pulled.documents == 0)
        #expect(summary.errorsByDomainAndCode == ["HTTP 403": 2] && summary.findings.isEmpty)
        #expect(script.analyzer.timeline(docID: "mixed").last?.kind == .revRefused)
    }

    @Test("a checkpoint while an attachment is still being fetched does not keep that document")
    func fetchInFlightIsNotKept() {
        let script = Script()
        Self.pull(["a", "b"], in: script)
        script.client(request("getAttachment", 2, [("docID", "b"), ("digest", "sha1-b")]))
        script.client(request("setCheckpoint", 3, [("client", "cp-1")], body: "{\"remote\":2}"))
        script.server(reply(3, [("rev", "0-1")]))
        var summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsKept == 1 && summary.pulled.revisionsUnconfirmed == 1)
        script.server(reply(2, body: "blob bytes"))
        script.client(request("setCheckpoint", 4, [("client", "cp-1"), ("rev", "0-1")], body: "{\"remote\":2}"))
        script.server(reply(4, [("rev", "0-2")]))
        summary = script.analyzer.summary()
        #expect(summary.pulled.revisionsKept == 2 && summary.pulled.documents == 2)
    }
}
