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

    /// LiteCore sends an empty `rev` for a new checkpoint; a server that has one answers 409,
    /// and a client that does not read the server's rev tries again and again.
    @Test("a 409 loop is reported once when first made, counted while it goes on, and ends with a save")
    func checkpointLoopRunningCount() {
        let script = Script()
        var raised: [Finding] = []
        var changed: [MessageNumber] = []
        for number in MessageNumber(1)...10 {
            script.client(request("setCheckpoint", number, [("client", "cp"), ("rev", "")], body: #"{"local":1}"#))
            let answer = script.server(errorReply(number, code: 409))
            raised += answer.findings
            if answer.changesStuckReasons { changed.append(number) }
        }
        #expect(raised.count == 1 && changed == [3])
        #expect(raised.first?.description
            == #"checkpointConflictLoop by client: setCheckpoint client=cp keeps failing with 409: rev "" is stale; no checkpoint rev seen in this session (3 times)"#)
        let all = script.analyzer.allFindings(now: .infinity)
        #expect(all.count == 1 && all.first?.count == 10 && all.first?.holds == true)
        #expect(script.analyzer.standingStuckReasons == [.checkpointConflictLoop])
        #expect(script.analyzer.summary().findings == [FindingTally(kind: .checkpointConflictLoop, findings: 1, occurrences: 10)])

        script.client(request("getCheckpoint", 11, [("client", "cp")]))
        script.server(reply(11, [("rev", "7-b")], body: #"{"local":0}"#))
        script.client(request("setCheckpoint", 12, [("client", "cp"), ("rev", "7-b")], body: #"{"local":1}"#))
        #expect(script.server(reply(12, [("rev", "8-c")])).changesStuckReasons)
        #expect(script.analyzer.standingStuckReasons.isEmpty && script.stuck(after: 0).isEmpty)
        let ended = script.analyzer.findings
        #expect(ended.count == 1 && ended.first?.holds == false)
        #expect(ended.first?.description.hasSuffix("(10 times, then it stopped)") == true)
    }

    /// The server offers `wanted` documents, the client wants them all, one rev is sent, and the
    /// server closes with 1011 `reason` (the client's close follows).
    private static func pullCutShort(_ script: Script, wanted: Int, reason: String) {
        let entries = (1...wanted).map { "[\($0),\"d\($0)\",\"\(revA1)\"]" }.joined(separator: ",")
        script.server(request("changes", 1, body: "[\(entries)]"))
        script.client(reply(1, body: "[" + Array(repeating: "[]", count: wanted).joined(separator: ",") + "]"))
        script.server(request("rev", 2, [("id", "d1"), ("rev", revA1)], body: "{}"))
        script.now += 1
        script.analyzer.observeClose(from: .serverToClient, code: 1011, reason: reason, at: script.now)
        script.analyzer.observeClose(from: .clientToServer, code: 1011, reason: "", at: script.now)
    }

    /// A policy's close fault (1011) in the middle of a pull: the revisions the client asked for
    /// are one finding, not one each.
    @Test("closed mid-transfer: one finding naming the close and the revisions outstanding")
    func closedMidTransfer() {
        let script = Script()
        Self.pullCutShort(script, wanted: 50, reason: "policy close")

        let stuck = script.analyzer.allFindings(now: .infinity)
        #expect(stuck.map(\.kind) == [.closedMidTransfer])
        #expect(stuck.first?.message == #"closed by 1011 "policy close" from server with 50 revision(s) outstanding (49 wanted and never sent, 1 sent and never answered)"#)
        #expect(script.analyzer.summary().findings == [FindingTally(kind: .closedMidTransfer, findings: 1, occurrences: 50)])
    }

    /// The close ends a one-shot pull before its caught-up: the closedMidTransfer finding says
    /// so, rather than a second notCaughtUp finding for the same close.
    @Test("a one-shot pull closed mid-transfer: one finding, which says the pull had not caught up")
    func oneShotPullClosedMidTransfer() {
        let script = Script()
        script.client(request("subChanges", 1, [("batch", "200")]))
        script.server(reply(1))
        Self.pullCutShort(script, wanted: 30, reason: "injected")

        let all = script.analyzer.allFindings(now: .infinity)
        #expect(all.map(\.kind) == [.closedMidTransfer])
        #expect(all.first?.message.hasSuffix(", before the one-shot pull caught up") == true, "\(all)")
        #expect(script.analyzer.summary().findings == [FindingTally(kind: .closedMidTransfer, findings: 1, occurrences: 30)])
    }

    @Test("a one-shot pull closed between batches, nothing on its way: notCaughtUp")
    func oneShotPullClosedBetweenBatches() {
        let script = Script()
        script.client(request("subChanges", 1, [("batch", "200")]))
        script.server(reply(1))
        script.server(request("changes", 1, body: "[[1,\"d\",\"\(revA1)\"]]"))
        script.client(reply(1, body: "[]"))
        script.analyzer.observeClose(from: .serverToClient, code: 1011, reason: "injected", at: script.now + 1)
        #expect(script.analyzer.summary().findings.map(\.kind) == [.notCaughtUp])
    }

    @Test("a drop without CLOSE is named as such")
    func droppedMidTransfer() {
        let script = Script()
        script.client(request("rev", 1, [("id", "d"), ("rev", revA1)], body: "{}"))
        script.analyzer.observeClose(from: .clientToServer, code: nil, reason: "TCP RST", at: 5)
        #expect(script.analyzer.allFindings(now: .infinity).map(\.message)
            == ["dropped without CLOSE by client (TCP RST) with 1 revision(s) outstanding (1 sent and never answered)"])
    }

    @Test("at the end of a capture everything outstanding is stuck")
    func endOfCapture() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        #expect(script.analyzer.stuckFindings(now: .infinity).first?.message.hasSuffix("has had no reply until the end") == true)
    }
}
