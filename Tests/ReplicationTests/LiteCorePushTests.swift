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

    @Test("an answer that is neither a status nor a status object is still a violation")
    func malformedAnswer() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA1)\"]]"))
        let answer = script.server(reply(1, body: "[{\"rev\":\"\(revA1)\"}]"))
        #expect(answer.message.violations.count == 1)
    }
}
