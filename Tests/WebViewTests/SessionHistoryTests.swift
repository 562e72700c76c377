import BLIPCore
import Foundation
import Testing
@testable import WebView

/// What the web view keeps of a session, told as a short replication: linked pairs, bounds,
/// redaction, closed sessions.
@Suite("Session history")
struct SessionHistoryTests {
    @Test("a pull: each message is a row, requests and replies point at each other")
    func pullRows() throws {
        let script = SessionScript()
        script.client(request("subChanges", 1, [("batch", "200")]))
        script.server(reply(1))
        script.server(request("changes", 1, body: #"[[1,"d1","\#(revA1)"],[2,"d2","\#(revA1)"]]"#))
        script.client(reply(1, body: "[[],[]]"))
        script.server(request("rev", 2, [("id", "d1"), ("rev", revA1), ("sequence", "1")], body: #"{"name":"one"}"#))
        script.client(reply(2))

        let page = try object(WebJSON.messages(script.recording, filter: MessageFilter(), from: 0, limit: 100))
        let rows = try #require(page["rows"] as? [[String: Any]])
        #expect(rows.count == 6 && page["total"] as? Int == 6 && page["next"] as? Int == 6)
        #expect(rows.map { $0["l"] as? Int } == [1, 0, 3, 2, 5, 4])
        #expect(rows.map { $0["d"] as? Int } == [0, 1, 1, 0, 1, 0])
        #expect(rows[2]["p"] as? String == "changes" && rows[3]["p"] as? String == "changes")
        #expect((rows[2]["s"] as? String)?.contains("changes") == true)
        #expect(rows[2]["docs"] as? [String] == ["d1", "d2"])
        #expect(rows[3]["docs"] as? [String] == ["d1", "d2"], "a reply names its request's documents")
        #expect(rows[4]["docs"] as? [String] == ["d1"] && rows[4]["ty"] as? String == "MSG")
    }

    @Test("a session that does not decode: its forwarded bytes count each way, with no message row")
    func forwardedBytesWithoutMessages() throws {
        let script = SessionScript()
        script.history.forwarded(sessionID: script.id, direction: .clientToServer, bytes: 300)
        script.history.forwarded(sessionID: script.id, direction: .serverToClient, bytes: 1_200)
        script.history.forwarded(sessionID: script.id, direction: .clientToServer, bytes: 20)
        script.history.forwarded(sessionID: 99, direction: .clientToServer, bytes: 5)  // no such session: nothing
        let snapshot = script.recording.snapshot()
        #expect(snapshot.bytes == [320, 1_200])
        #expect(snapshot.messages == [0, 0] && snapshot.total == 0)
    }

    @Test("the detail: properties redacted, the body kept, the pair's row")
    func detail() throws {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "cp1"), ("Cookie", "SyncGatewaySession=s3cr3t")]))
        script.server(reply(1, [("rev", "3-x")], body: #"{"remote":42}"#))
        let detail = try object(try #require(WebJSON.detail(script.recording, seq: 0)))
        let properties = try #require(detail["properties"] as? [[String]])
        #expect(properties.contains(["client", "cp1"]))
        #expect(properties.contains(["Cookie", "<redacted>"]))
        #expect(!WebJSON.detail(script.recording, seq: 0)!.contains("s3cr3t"))
        let linked = try #require(detail["linked"] as? [String: Any])
        #expect(linked["i"] as? Int == 1 && linked["ty"] as? String == "RPY")

        let replyDetail = try object(try #require(WebJSON.detail(script.recording, seq: 1)))
        let base64 = try #require(replyDetail["bodyBase64"] as? String)
        let body = try #require(Data(base64Encoded: base64))
        #expect(String(decoding: body, as: UTF8.self) == #"{"remote":42}"#)
        #expect(replyDetail["bodyBytes"] as? Int == 13 && replyDetail["frames"] as? Int == 1)
        #expect(WebJSON.detail(script.recording, seq: 2) == nil)
    }

    @Test("the ring keeps the newest messages; seqs are never reused; previews stay within budget")
    func ringBounds() throws {
        var limits = WebViewLimits()
        limits.maxMessagesPerSession = 5
        limits.bodyPreviewBytes = 4
        // Each record copies 4 bytes of body and its 14-byte properties block (a length byte, then "Profile" "ping" with their zero bytes).
        limits.maxCopiedBytesPerSession = 3 * 18
        let script = SessionScript(limits: limits)
        for number in MessageNumber(1)...12 {
            script.client(request("ping", number, body: "0123456789", noReply: true))
        }
        let snapshot = script.recording.snapshot()
        #expect(snapshot.total == 12 && snapshot.oldest == 7 && snapshot.messages == [12, 0])
        let kept = script.recording.records(from: 0, limit: 100)
        #expect(kept.map(\.seq) == [7, 8, 9, 10, 11])
        #expect(kept.reduce(0) { $0 + $1.copiedBytes } <= 3 * 18)
        #expect(kept.allSatisfy { $0.copiedBytes == 0 || $0.copiedBytes == 18 })
        #expect(script.recording.record(seq: 3) == nil && script.recording.record(seq: 11)?.number == 12)
    }

    @Test("requests left unanswered cannot unlink the ones still waiting: only requests that left the ring are forgotten")
    func unansweredRequestsKeepLinks() throws {
        var limits = WebViewLimits()
        limits.maxMessagesPerSession = 4
        let script = SessionScript(limits: limits)
        // Five revs still waiting for their replies (as many as the ring keeps, and one more),
        // then the reply to the fourth, whose request is still kept.
        for number in MessageNumber(1)...5 {
            script.client(request("rev", number, [("id", "d\(number)"), ("rev", revA1)]))
        }
        script.server(reply(4))
        let kept = script.recording.records(from: 0, limit: 10)
        #expect(kept.map(\.seq) == [2, 3, 4, 5])
        #expect(kept.last?.link == 3 && kept[1].link == 5, "the reply and its request point at each other")
        #expect(script.recording.pendingRequests <= 2 * limits.maxMessagesPerSession)
        // A long run of unanswered requests keeps the table within its bound.
        for number in MessageNumber(7)...40 {
            script.client(request("rev", number, [("id", "d\(number)"), ("rev", revA1)]))
            #expect(script.recording.pendingRequests <= 2 * limits.maxMessagesPerSession)
        }
    }

    @Test("a peer sending large properties in every message cannot make a session keep more than its copy budget")
    func propertyCopiesShareTheBudget() throws {
        var limits = WebViewLimits()
        limits.maxMessagesPerSession = 1_000
        limits.maxCopiedBytesPerSession = 64 * 1024
        let script = SessionScript(limits: limits)
        let bulky = [("padding", String(repeating: "x", count: 8_000))]
        for number in MessageNumber(1)...200 {
            script.client(request("ping", number, bulky, noReply: true))
        }
        let kept = script.recording.records(from: 0, limit: 1_000)
        #expect(kept.count == 200)
        let copied = kept.reduce(0) { $0 + $1.copiedBytes }
        #expect(copied <= 64 * 1024 && copied > 56 * 1024, "copies fill the budget, never past it: \(copied)")
        #expect(kept.first?.redactedProperties?.first?.key == "Profile")
        #expect(kept.last?.redactedProperties == nil && kept.last?.propertyCount == 2)
        #expect(script.recording.snapshot().previewsSkipped == 200 - kept.filter { $0.copiedBytes > 0 }.count)
    }

    @Test("closed sessions beyond the limit are forgotten, oldest first; live ones beyond theirs are not recorded")
    func sessionBounds() {
        var limits = WebViewLimits()
        limits.maxClosedSessions = 2
        limits.maxLiveSessions = 3
        let history = SessionHistory(limits: limits)
        for id in UInt64(1)...3 {
            let script = SessionScript(id: id, history: history)
            script.client(request("ping", 1, noReply: true))
            script.close()
        }
        #expect(history.recordings().map(\.description.id) == [2, 3])
        for id in UInt64(10)...13 { _ = SessionScript(id: id, history: history) }
        #expect(history.recordings().map(\.description.id) == [2, 3, 10, 11, 12])
        #expect(history.notRecorded == 1)
        history.append(sessionID: 13, request("ping", 1), direction: .clientToServer, time: 1, profile: "ping",
                       analysis: nil, roundTrip: nil)
        #expect(history.recording(13) == nil)
    }

    @Test("the sessions list: who, counts each way, replication kind, findings, state")
    func sessionsList() throws {
        let script = SessionScript()
        script.client(request("subChanges", 1, [("continuous", "true")]))
        script.server(reply(1))
        var json = try object(WebJSON.sessions(script.history, now: 200))
        var session = try #require((json["sessions"] as? [[String: Any]])?.first)
        #expect(session["user"] as? String == "alice" && session["database"] as? String == "db")
        #expect(session["messages"] as? [Int] == [1, 1] && session["live"] as? Bool == true)
        let replication = try #require(session["replication"] as? [String: Any])
        #expect(replication["type"] as? String == "pull" && replication["continuous"] as? Bool == true)
        #expect(session["duration"] as? Double == 100)
        script.close()
        json = try object(WebJSON.sessions(script.history, now: 500))
        session = try #require((json["sessions"] as? [[String: Any]])?.first)
        #expect(session["live"] as? Bool == false && session["closeReason"] as? String == "client 1000")
        #expect(session["duration"] as? Double == 3)
    }
}
