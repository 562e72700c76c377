import BLIPCore
import Foundation
import Replication
import SyncGatewayLog
import Testing
@testable import WebView

/// Sync Gateway's own lines beside a session in the web view: a pull in which SG refuses the
/// client's getAttachment (403), with SG's lines of that replication (`c:[a1]`) given as the
/// relay's follower reads them.
@Suite struct SyncGatewayLogViewTests {
    static let digest = "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="

    static func lines(_ texts: [String]) -> [SyncGatewayLogLine] { texts.map { SyncGatewayLogLine(Substring($0))! } }

    /// The pull up to SG's 403, and SG's lines about it (one of another replication).
    static func refusedAttachment(_ script: SessionScript) {
        script.client(request("subChanges", 1, [("since", "0")]))
        script.server(request("changes", 1, body: #"[[1,"withblob","\#(revA1)"]]"#))
        script.client(reply(1, body: "[[]]"))
        script.history.addSyncGatewayLines(lines([
            "2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db col:_default #1: Type:subChanges Since:0 Continuous:false",
            "2026-12-05T12:14:52.416Z [INF] SyncMsg: c:[ffff] db:db col:_default #1: Type:subChanges Since:0",
        ]))
        script.server(request("rev", 2, [("id", "withblob"), ("rev", revA1)],
                              body: #"{"_attachments":{"b":{"digest":"\#(digest)","length":300000,"revpos":1,"stub":true}}}"#, noReply: true))
        script.client(request("getAttachment", 2, [("digest", digest), ("docID", "withblob")]))
        script.server(errorReply(2, code: 403, message: "Attachment's doc not being synced"))
        script.history.addSyncGatewayLines(lines([
            "2026-12-05T12:14:52.600Z [INF] Sync: c:[a1] db:db col:_default Sent 1 changes to client, from seq 1",
            "2026-12-05T12:14:52.700Z [INF] SyncMsg: c:[a1] db:db col:_default #2: Type:getAttachment Digest:\(digest)",
            "2026-12-05T12:14:52.701Z [INF] SyncMsg: c:[a1] db:db col:_default #2: Type:getAttachment   --> 403 Attachment's doc not being synced Time:85µs",
        ]))
    }

    @Test("SG's lines of the session, each about a request linked to that request's message, the rest the session's")
    func theSessionsLines() throws {
        let script = SessionScript(history: SessionHistory(joinsSyncGatewayLog: true), correlationID: "a1")
        Self.refusedAttachment(script)
        let json = try object(try #require(WebJSON.syncGatewayLog(script.recording)))
        let lines = try #require(json["lines"] as? [[String: Any]])
        #expect(lines.count == 4, "the other replication's line is not this session's")
        #expect(json["correlationID"] as? String == "a1" && json["dropped"] as? Int == 0)
        let subChanges = try #require(script.recording.seq(of: .clientToServer, type: .request, number: 1))
        let getAttachment = try #require(script.recording.seq(of: .clientToServer, type: .request, number: 2))
        #expect(lines.map { $0["request"] as? Int } == [1, nil, 2, 2])
        #expect(lines.map { $0["seq"] as? Int } == [subChanges, nil, getAttachment, getAttachment])
        #expect((lines[3]["line"] as? String)?.contains("--> 403 Attachment's doc not being synced") == true)
        #expect(lines.allSatisfy { $0["level"] as? String == "INF" && $0["time"] as? String != nil })

        let session = try object(WebJSON.session(script.recording, now: 200))
        #expect((session["sgLog"] as? [String: Any])?["lines"] as? Int == 4)
    }

    @Test("a message's detail carries SG's lines about it: the request and SG's error reply alike")
    func theMessagesLines() throws {
        let script = SessionScript(history: SessionHistory(joinsSyncGatewayLog: true), correlationID: "a1")
        Self.refusedAttachment(script)
        for (direction, type) in [(BLIPDirection.clientToServer, MessageType.request), (.serverToClient, .error)] {
            let seq = try #require(script.recording.seq(of: direction, type: type, number: 2))
            let detail = try object(try #require(WebJSON.detail(script.recording, seq: seq)))
            let lines = try #require(detail["sgLog"] as? [[String: Any]], "\(direction) \(type)")
            #expect(lines.compactMap { $0["line"] as? String }.contains { $0.contains("--> 403") })
        }
        let changes = try #require(script.recording.seq(of: .serverToClient, type: .request, number: 1))
        #expect(try object(try #require(WebJSON.detail(script.recording, seq: changes)))["sgLog"] == nil,
                "SG's own request is no request SG handled")
    }

    @Test("the document's timeline shows SG's view of the refusal next to the 403 it sent")
    func theDocumentsTimeline() throws {
        let script = SessionScript(history: SessionHistory(joinsSyncGatewayLog: true), correlationID: "a1")
        Self.refusedAttachment(script)
        let json = try object(WebJSON.document("withblob", history: script.history))
        let events = try #require(json["events"] as? [[String: Any]])
        let notStored = try #require(events.first { ($0["event"] as? [String: Any])?["event"] as? String == "revNotStored" },
                                     "\(events.map { ($0["event"] as? [String: Any])?["event"] ?? "?" })")
        let lines = try #require(notStored["sgLog"] as? [[String: Any]])
        #expect(lines.compactMap { $0["line"] as? String }.contains { $0.contains("--> 403 Attachment's doc not being synced") })
    }

    @Test("lines come to a closed session too (SG logs the connection's end after it), within the session's budget")
    func closedSessionsAndTheBudget() throws {
        var limits = WebViewLimits()
        limits.maxSyncGatewayLogBytesPerSession = 300
        let history = SessionHistory(limits: limits, joinsSyncGatewayLog: true)
        let script = SessionScript(history: history, correlationID: "a1")
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        script.close()
        let line = "2026-12-05T12:14:53.939Z [INF] HTTP: c:[a1] db:db #005:    --> BLIP+WebSocket connection closed"
        #expect(history.addSyncGatewayLines(Self.lines(Array(repeating: line, count: 5))) == 0)
        let log = try #require(script.recording.syncGatewayLog())
        #expect(log.entries.count == 300 / line.utf8.count && log.entries.count + log.dropped == 5)
    }

    @Test("a history that does not join SG's log keeps none, and a session without a correlation ID none either")
    func onlyWhenAsked() {
        let plain = SessionScript(correlationID: "a1")
        #expect(plain.history.addSyncGatewayLines(Self.lines(["2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db #1: Type:getCheckpoint"])) == 1)
        #expect(plain.recording.syncGatewayLog() == nil && WebJSON.syncGatewayLog(plain.recording) == nil)
        let anonymous = SessionScript(history: SessionHistory(joinsSyncGatewayLog: true))
        #expect(anonymous.recording.syncGatewayLog() == nil && anonymous.history.correlationIDs.isEmpty)
    }

    @Test("a forgotten closed session's ID no longer takes lines")
    func forgottenSessions() {
        var limits = WebViewLimits()
        limits.maxClosedSessions = 1
        let history = SessionHistory(limits: limits, joinsSyncGatewayLog: true)
        SessionScript(id: 1, history: history, correlationID: "a1").close()
        SessionScript(id: 2, history: history, correlationID: "b2").close()
        #expect(history.correlationIDs == ["b2"])
        #expect(history.addSyncGatewayLines(Self.lines(["2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db #1: Type:getCheckpoint"])) == 1)
    }

    @Test("SG's line read before the relay recorded the request (it records after forwarding) joins the request once it is recorded")
    func aLineBeforeItsRequest() throws {
        let script = SessionScript(history: SessionHistory(joinsSyncGatewayLog: true), correlationID: "a1")
        script.history.addSyncGatewayLines(Self.lines(["2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db col:_default #1: Type:getCheckpoint Client:cp"]))
        #expect(script.recording.syncGatewayLog()?.entries.first?.request == nil)
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        #expect(script.recording.syncGatewayLog()?.entries.first?.request == 1)
        let seq = try #require(script.recording.seq(of: .clientToServer, type: .request, number: 1))
        #expect((try object(try #require(WebJSON.detail(script.recording, seq: seq)))["sgLog"] as? [Any])?.count == 1)
    }
}
