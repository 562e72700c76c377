import BLIPCore
import Testing
@testable import Replication

/// A push as Couchbase Lite (LiteCore 3.1) makes it, shapes taken from
/// /work/shared/reference/litecore-behaviour.md: `proposeChanges` with `conflictIncludesRev`, a
/// conflict answered with an object naming the server's revision.
@Suite("LiteCore push")
struct LiteCorePushTests {
    static let serverRev = "2-5b9f0d8c1e2a3b4c5d6e7f8091a2b3c4"

    @Test("a conflict answered {status: 409, rev} is one conflict, read without a violation")
    func conflictObject() {
        let script = Script()
        script.client(request("proposeChanges", 1, [("conflictIncludesRev", "true")],
                              body: "[[\"a\",\"\(revA1)\",\"\",12],[\"b\",\"\(revA2)\",\"\(revA1)\",40]]"))
        let answer = script.server(reply(1, body: "[0,{\"status\":409,\"rev\":\"\(Self.serverRev)\"}]"))
        #expect(answer.message.violations.isEmpty)
        #expect(answer.summary == "proposeChanges 2 → 1×send 1×409")
        guard case .proposeChangesReply(let parsed) = answer.message.content else {
            Issue.record("not read as a proposeChanges reply")
            return
        }
        #expect(parsed.answers == [.send, .init(status: 409, serverRevID: Self.serverRev)])

        script.client(request("rev", 2, [("id", "a"), ("rev", revA1)], body: "{}"))
        script.server(reply(2))
        let summary = script.analyzer.summary()
        #expect(summary.conflicts == 1 && summary.protocolViolations == 0)
        #expect(summary.pushed.revisionsWanted == 1 && summary.pushed.revisionsRefused == 1)
        #expect(script.analyzer.timeline(docID: "b").last?.note == "409: conflict, resolve and retry (peer has 2-5b9f…)")
        // "b" was never wanted: nothing waits for its rev.
        #expect(script.analyzer.stuckFindings(now: .infinity).isEmpty)
        #expect(script.analyzer.findings.isEmpty)
    }

    @Test("null answers \"send it\", as 0 does")
    func nullAnswer() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"],[\"b\",\"\(revA1)\"]]"))
        let answer = script.server(reply(1, body: "[null,304]"))
        #expect(answer.message.violations.isEmpty)
        #expect(answer.summary == "proposeChanges 2 → 1×send 1×304")
    }

    @Test("an answer that is neither a status nor a status object is still a violation")
    func malformedAnswer() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"]]"))
        let answer = script.server(reply(1, body: "[{\"rev\":\"\(revA1)\"}]"))
        #expect(answer.message.violations.count == 1)
    }

    /// A one-shot push of two documents by a new client, as LiteCore makes it: getCheckpoint
    /// answered 404, proposeChanges, the revs, then the timed setCheckpoint with an empty `rev`.
    @Test("a LiteCore push: offers counted, the first 404 normal, done once the checkpoint is saved")
    func pushStory() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp-push")]))
        let notFound = script.server(errorReply(1, code: 404, message: "missing"))
        #expect(notFound.isExpectedError)
        script.client(request("proposeChanges", 2, body: "[[\"a\",\"\(revA1)\"],[\"b\",\"\(revA1)\"]]"))
        script.server(reply(2, body: "[]"))
        script.client(request("rev", 3, [("id", "a"), ("rev", revA1)], body: "{}"))
        script.client(request("rev", 4, [("id", "b"), ("rev", revA1)], body: "{}"))
        script.server(reply(3))
        #expect(script.analyzer.summary().pushDone == false, "rev #4 has no reply yet")
        script.server(reply(4))
        #expect(script.analyzer.summary().pushDone == false, "the checkpoint is not saved yet")
        script.client(request("setCheckpoint", 5, [("client", "cp-push"), ("rev", "")], body: #"{"local":2}"#), after: 5)
        #expect(script.analyzer.summary().pushDone == false, "the save has no reply yet")
        script.server(reply(5, [("rev", "1-cc")]))

        let summary = script.analyzer.summary()
        #expect(summary.replicationType == "push")
        #expect(summary.pushed.revisionsOffered == 2 && summary.pushed.revisionsProposed == 2)
        #expect(summary.pushDone == true && summary.pullCaughtUp == nil && summary.caughtUp)
        #expect(summary.secondsToCaughtUp == summary.startTime.map { script.now - $0 }, "caught up at the save's reply")
        #expect(summary.newCheckpoints == 1 && summary.errorsByDomainAndCode.isEmpty)
        let stats = summary.profiles.first { $0.profile == "getCheckpoint" }
        #expect(stats?.errors == 0 && stats?.replies == 1)
        #expect(script.analyzer.checkpointHistory.last?.summary == "setCheckpoint client=cp-push rev \"\" → 1-cc [local: ∅→2]")
    }

    @Test("a checkpoint saved before the last rev was answered does not finish the push")
    func checkpointBeforeTheLastAnswer() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"]]"))
        script.server(reply(1, body: "[]"))
        script.client(request("rev", 2, [("id", "a"), ("rev", revA1)], body: "{}"))
        script.client(request("setCheckpoint", 3, [("client", "cp")], body: #"{"local":0}"#))
        script.server(reply(2))
        script.server(reply(3, [("rev", "1-aa")]))
        #expect(script.analyzer.summary().pushDone == false)
        #expect(!script.analyzer.summary().caughtUp)
    }

    @Test("a wanted revision never sent leaves the push not done; nothing to push is done at once")
    func outstandingAndEmpty() {
        let wanting = Script()
        wanting.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"]]"))
        wanting.server(reply(1, body: "[0]"))
        #expect(wanting.analyzer.summary().pushDone == false)

        let empty = Script()
        empty.client(request("proposeChanges", 1, body: "[]"))
        empty.server(reply(1, body: "[]"))
        #expect(empty.analyzer.summary().pushDone == true)
    }

    @Test("a getCheckpoint 404 after the checkpoint was seen is an error")
    func laterNotFound() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        script.server(reply(1, [("rev", "3-a")], body: "{}"))
        script.client(request("getCheckpoint", 2, [("client", "cp")]))
        #expect(!script.server(errorReply(2, code: 404)).isExpectedError)
        #expect(script.analyzer.summary().errorsByDomainAndCode == ["HTTP 404": 1])
    }

    /// A relay whose policy denies a rev (readOnly, deny by document): the server never gets
    /// it, the client gets the relay's 403.
    @Test("a rev the relay withheld and answered with 403: not delivered, one error the client got")
    func withheldRev() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"],[\"secret\",\"\(revA1)\"]]"))
        script.server(reply(1, body: "[]"))
        script.client(request("rev", 2, [("id", "a"), ("rev", revA1)], body: "{}"))
        script.server(reply(2))
        script.now += 0.01
        script.analyzer.observe(withheld: request("rev", 3, [("id", "secret"), ("rev", revA1)], body: "{}"),
                                from: .clientToServer, at: script.now)
        let denied = script.server(errorReply(3, code: 403, message: "drafts stay on the device"))
        #expect(denied.summary.hasPrefix("rev secret"))

        let summary = script.analyzer.summary()
        #expect(summary.pushed.revisionsSent == 1 && summary.pushed.documents == 1)
        #expect(summary.pushed.revisionsWithheld == 1 && summary.pushed.revisionsRefused == 1)
        #expect(summary.errorsByDomainAndCode == ["HTTP 403": 1])
        #expect(script.analyzer.timeline(docID: "secret").map(\.kind) == [.proposed, .wanted, .revWithheld, .revRefused])
        #expect(script.analyzer.stuckFindings(now: .infinity).isEmpty, "nothing waits for the withheld rev")
    }
}
