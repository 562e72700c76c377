import BLIPCore
import Testing
@testable import Replication

/// Each stuck rule, as a short scripted session; time only moves when the script says so.
@Suite("Stuck detection")
struct StuckDetectionTests {
    @Test("a request with no reply after the timeout")
    func unansweredRequest() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        #expect(script.stuck(after: 10).isEmpty)
        let found = script.stuck(after: 31)
        #expect(found.map(\.kind) == [.unansweredRequest])
        #expect(found[0].side == .serverToClient)
        #expect(found[0].message == "getCheckpoint client=c sent by client has had no reply for 31 s")
    }

    @Test("a wanted rev that never arrives, neither as rev nor norev")
    func wantedRevNeverArrives() {
        let script = Script()
        script.server(request("changes", 1, body: "[[1,\"d1\",\"\(revA1)\"],[2,\"d2\",\"\(revA1)\"]]"))
        script.client(reply(1, body: "[[],[]]"))
        script.server(request("rev", 2, [("id", "d1"), ("rev", revA1)], body: "{}"))
        script.client(reply(2))
        let found = script.stuck(after: 61)
        #expect(found.map(\.kind) == [.revNeverArrived])
        #expect(found.first?.docID == "d2" && found.first?.side == .serverToClient)
    }

    @Test("a norev answers a wanted rev")
    func norevAnswers() {
        let script = Script()
        script.server(request("changes", 1, body: "[[1,\"d1\",\"\(revA1)\"]]"))
        script.client(reply(1, body: "[[]]"))
        script.server(request("norev", 2, [("id", "d1"), ("rev", revA1), ("error", "404")], noReply: true))
        #expect(script.stuck(after: 1000).filter { $0.kind == .revNeverArrived }.isEmpty)
        #expect(script.analyzer.timeline(docID: "d1").last?.kind == .noRev)
    }

    @Test("a rev with no reply")
    func unansweredRev() {
        let script = Script()
        script.client(request("rev", 1, [("id", "d"), ("rev", revA1)], body: "{}"))
        let found = script.stuck(after: 61)
        #expect(found.map(\.kind) == [.unansweredRev])
        #expect(found[0].docID == "d")
    }

    @Test("a message paused on ACK flow control, until the ACK comes")
    func pausedOnAck() {
        let script = Script()
        script.analyzer.observePaused(.serverToClient, type: .request, number: 4, at: 1)
        #expect(script.analyzer.stuckFindings(now: 12).map(\.kind) == [.pausedOnAck])
        script.analyzer.observeAck(AckInfo(type: .ackRequest, number: 4, bytes: 128_000), from: .clientToServer, at: 13)
        #expect(script.analyzer.stuckFindings(now: 30).isEmpty)
    }

    @Test("a one-shot pull that never gets the empty changes")
    func notCaughtUp() {
        let script = Script()
        script.client(request("subChanges", 1, [("batch", "10")]))
        script.server(reply(1))
        script.server(request("changes", 1, body: "[[1,\"d\",\"\(revA1)\"]]"))
        script.client(reply(1, body: "[]"))
        #expect(script.stuck(after: 61).map(\.kind) == [.notCaughtUp])
        script.server(request("changes", 2, body: "[]"))
        script.client(reply(2))
        #expect(script.stuck(after: 61).isEmpty)
        #expect(script.analyzer.summary().caughtUp)
    }

    @Test("a continuous pull is never 'not caught up'")
    func continuousPull() {
        let script = Script()
        script.client(request("subChanges", 1, [("continuous", "true")]))
        script.server(reply(1))
        #expect(script.stuck(after: 10_000).isEmpty)
    }

    @Test("the same revision refused again and again")
    func refusedRepeatedly() {
        let script = Script()
        var raised: [Finding] = []
        for attempt in 0..<3 {
            let number = MessageNumber(attempt + 1)
            script.client(request("proposeChanges", number, body: "[[\"d\",\"\(revA2)\",\"\(revA1)\"]]"))
            raised += script.server(reply(number, body: "[409]")).findings
        }
        #expect(raised.map(\.kind) == [.revisionRefusedRepeatedly])
        #expect(script.stuck(after: 0).map(\.kind) == [.revisionRefusedRepeatedly])
    }

    @Test("the 409 checkpoint loop: setCheckpoint with a stale MVCC rev, over and over")
    func checkpointConflictLoop() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        script.server(reply(1, [("rev", "5-x")], body: #"{"remote":10}"#))
        var raised: [Finding] = []
        for attempt in 0..<3 {
            let number = MessageNumber(attempt + 2)
            script.client(request("setCheckpoint", number, [("client", "cp"), ("rev", "4-old")], body: #"{"remote":20}"#))
            raised += script.server(errorReply(number, code: 409, message: "Document update conflict")).findings
        }
        #expect(raised.map(\.kind) == [.checkpointConflictLoop])
        #expect(raised.first?.message.contains("rev 4-old is stale; server has 5-x") == true)
        #expect(script.stuck(after: 0).map(\.kind) == [.checkpointConflictLoop])
        let summary = script.analyzer.summary()
        #expect(summary.checkpointConflicts == 3 && summary.errorsByDomainAndCode == ["HTTP 409": 3])
        #expect(script.analyzer.checkpointHistory.last?.summary == "setCheckpoint client=cp rev 4-old → HTTP 409 [remote: 10→20]")
        script.client(request("setCheckpoint", 9, [("client", "cp"), ("rev", "5-x")], body: #"{"remote":20}"#))
        script.server(reply(9, [("rev", "6-y")]))
        #expect(script.stuck(after: 0).isEmpty)
    }

    @Test("at the end of a capture everything outstanding is stuck")
    func endOfCapture() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        #expect(script.analyzer.stuckFindings(now: .infinity).first?.message.hasSuffix("has had no reply until the end") == true)
    }
}
