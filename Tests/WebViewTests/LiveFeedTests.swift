import BLIPCore
import Foundation
import Testing
@testable import WebView

/// The live feeds as a viewer reads them: new rows once, a slow viewer told what it missed and
/// never sent more than its backlog, the sessions list only when it changed.
@Suite("Live feeds")
struct LiveFeedTests {
    func rows(_ event: ServerSentEvent) throws -> [Int] {
        try #require(try object(event.data)["rows"] as? [[String: Any]]).compactMap { $0["i"] as? Int }
    }

    @Test("a viewer gets each new message once, and the session when it changes")
    func tail() throws {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        var feed = MessageFeed(recording: script.recording, after: -1)
        var events = feed.poll(now: 200)
        #expect(events.map(\.event) == ["messages", "session"])
        #expect(try rows(events[0]) == [0])
        #expect(feed.poll(now: 200).isEmpty)
        script.server(reply(1, body: "{}"))
        script.client(request("subChanges", 2))
        events = feed.poll(now: 201)
        #expect(events.first?.event == "messages")
        #expect(try rows(events[0]) == [1, 2])
        script.close()
        events = feed.poll(now: 202)
        #expect(events.map(\.event) == ["session"])
        #expect(try object(events[0].data)["live"] as? Bool == false)
    }

    @Test("a viewer that starts after a seq gets only what follows it")
    func resume() throws {
        let script = SessionScript()
        for number in MessageNumber(1)...4 { script.client(request("ping", number, noReply: true)) }
        var feed = MessageFeed(recording: script.recording, after: 1)
        #expect(try rows(feed.poll(now: 0)[0]) == [2, 3])
    }

    @Test("a slow viewer skips to the newest messages with a 'missed' marker; no poll sends more than the backlog")
    func slowViewer() throws {
        var limits = WebViewLimits()
        limits.maxViewerBacklog = 3
        limits.maxMessagesPerSession = 100
        let script = SessionScript(limits: limits)
        var feed = MessageFeed(recording: script.recording, after: -1)
        #expect(feed.poll(now: 0).isEmpty == false)
        for number in MessageNumber(1)...10 { script.client(request("ping", number, noReply: true)) }
        let events = feed.poll(now: 0)
        #expect(events.map(\.event).prefix(2) == ["missed", "messages"])
        let missed = try object(events[0].data)
        #expect(missed["missed"] as? Int == 7 && missed["resumeAt"] as? Int == 7)
        #expect(try rows(events[1]) == [7, 8, 9])
        #expect(feed.missed == 7 && feed.next == 10)
        #expect(events.map(\.text).joined().contains("event: missed\ndata: {\"missed\":7"))
    }

    @Test("a viewer whose messages left the ring is told how many it missed")
    func overwritten() throws {
        var limits = WebViewLimits()
        limits.maxViewerBacklog = 100
        limits.maxMessagesPerSession = 4
        let script = SessionScript(limits: limits)
        var feed = MessageFeed(recording: script.recording, after: -1)
        for number in MessageNumber(1)...10 { script.client(request("ping", number, noReply: true)) }
        let events = feed.poll(now: 0)
        #expect(try object(events[0].data)["missed"] as? Int == 6)
        #expect(try rows(events[1]) == [6, 7, 8, 9])
    }

    @Test("the sessions list is sent when something changed, at most every few polls")
    func sessionsFeed() throws {
        let script = SessionScript()
        var feed = SessionsFeed(history: script.history, every: 2)
        let first = feed.poll(now: 0)
        #expect(first.map(\.event) == ["sessions"])
        #expect(feed.poll(now: 0).isEmpty && feed.poll(now: 0).isEmpty)
        script.client(request("ping", 1, noReply: true))
        #expect(feed.poll(now: 0).isEmpty, "an odd poll waits")
        #expect(feed.poll(now: 0).map(\.event) == ["sessions"])
        let sessions = try #require(try object(first[0].data)["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
    }

    @Test("an event's text: one data line per line, a blank line after")
    func eventText() {
        #expect(ServerSentEvent(event: "x", data: "a\nb").text == "event: x\ndata: a\ndata: b\n\n")
        #expect(ServerSentEvent.keepAlive.hasPrefix(":"))
    }
}

/// Rows are formatted once and shared between viewers; a shared row follows its record.
@Suite("Shared rows")
struct SharedRowTests {
    @Test("a request's row formatted before its reply came shows the reply's link afterwards")
    func sharedRowFollowsItsPair() throws {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        var first = MessageFeed(recording: script.recording, after: -1)
        let before = try #require(first.poll(now: 0).first)
        #expect(before.data.contains("\"i\":0") && before.data.contains("\"l\":-1"))
        #expect(script.recording.record(seq: 0)?.row != nil, "kept for the next viewer")
        script.server(reply(1))
        #expect(script.recording.record(seq: 0)?.row == nil, "its pair changed it")
        var second = MessageFeed(recording: script.recording, after: -1)
        let event = try #require(second.poll(now: 0).first)
        let rows = try #require(try object(event.data)["rows"] as? [[String: Any]])
        #expect(rows.map { $0["l"] as? Int } == [1, 0])
    }
}
