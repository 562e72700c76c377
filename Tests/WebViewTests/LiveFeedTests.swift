import BLIPCore
import Foundation
import Testing
@testable import WebView

/// The live feeds as a viewer reads them: new rows once, every row for a viewer that keeps up, in
/// batches bounded by bytes; a viewer that does not read told what it missed; the sessions list
/// only when it changed.
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

    @Test("a viewer that keeps up gets every message of a fast session, in batches bounded by bytes, never a 'missed' marker")
    func fastSessionEveryRow() throws {
        var limits = WebViewLimits()
        limits.maxViewerBatchBytes = 8 * 1024
        let script = SessionScript(limits: limits)
        var feed = MessageFeed(recording: script.recording, after: -1)
        for number in MessageNumber(1)...3_000 { script.client(request("ping", number, noReply: true)) }
        var seqs: [Int] = []
        var polls = 0
        repeat {
            let events = feed.poll(now: 0)
            polls += 1
            #expect(!events.contains { $0.event == "missed" })
            for event in events where event.event == "messages" {
                #expect(event.data.utf8.count <= limits.maxViewerBatchBytes)
                seqs += try rows(event)
            }
        } while feed.hasMore && polls < 10_000
        #expect(seqs == Array(0..<3_000), "every message, once, in order")
        #expect(polls > 10, "in many batches: \(polls)")
        #expect(feed.missed == 0 && !feed.hasMore)
        #expect(feed.poll(now: 0).filter { $0.event == "messages" }.isEmpty)
    }

    @Test("a batch is at least one row, however large")
    func oneRowAtLeast() throws {
        var limits = WebViewLimits()
        limits.maxViewerBatchBytes = 10
        let script = SessionScript(limits: limits)
        for number in MessageNumber(1)...3 { script.client(request("ping", number, noReply: true)) }
        var feed = MessageFeed(recording: script.recording, after: -1)
        #expect(try rows(feed.poll(now: 0)[0]) == [0] && feed.hasMore)
        #expect(try rows(feed.poll(now: 0)[0]) == [1])
    }

    @Test("a viewer whose connection did not take its batch skips to the newest with a 'missed' marker, then follows again")
    func stalledViewer() throws {
        let script = SessionScript()
        var feed = MessageFeed(recording: script.recording, after: -1)
        #expect(feed.poll(now: 0).isEmpty == false)
        for number in MessageNumber(1)...10 { script.client(request("ping", number, noReply: true)) }
        feed.fellBehind()
        let events = feed.poll(now: 0)
        #expect(events.first?.event == "missed")
        #expect(!events.contains { $0.event == "messages" })
        let missed = try object(events[0].data)
        #expect(missed["missed"] as? Int == 10 && missed["resumeAt"] as? Int == 10)
        #expect(feed.missed == 10 && feed.next == 10)
        #expect(events.map(\.text).joined().contains("event: missed\ndata: {\"missed\":10"))
        script.client(request("ping", 11, noReply: true))
        #expect(try rows(feed.poll(now: 0)[0]) == [10], "it follows from the newest on")
    }

    @Test("a viewer whose messages left the ring is told how many it missed")
    func overwritten() throws {
        var limits = WebViewLimits()
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
