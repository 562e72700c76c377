import BLIPCore
import Foundation
import Gateway
import NIOCore
import Testing
import WebView

/// The web view through real sockets: replicator ↔ relay ↔ gateway traffic, read back as the
/// page reads it, JSON and Server-Sent Events over HTTP from the relay's admin listener.
@Suite struct WebViewRelayTests {
    @Test func aPullIsListedWithItsMessagesDetailAndDocumentTimeline() async throws {
        try await withWebRelay(seed: ReplicatorTests.seedGateway) { web in
            let local = GatewayDatabase(name: "local")
            _ = try await web.relayed.replicator(.pull, into: local).run()
            await web.relayed.recorder.waitForClosedSessions(1)

            let sessions = try #require(try await web.json("/api/sessions")["sessions"] as? [[String: Any]])
            #expect(sessions.count == 1)
            let session = try #require(sessions.first)
            let id = try #require(session["id"] as? Int)
            #expect(session["live"] as? Bool == false && session["database"] as? String == "db")
            #expect((session["replication"] as? [String: Any])?["type"] as? String == "pull")
            #expect((session["messages"] as? [Int])?.allSatisfy { $0 > 0 } == true)

            let revs = try #require(try await web.json("/api/sessions/\(id)/messages?profile=rev")["rows"] as? [[String: Any]])
            // As from Sync Gateway: three revs, only beta's (it has an attachment) awaiting a reply.
            #expect(revs.count == 4, "three revs and beta's reply")
            #expect(revs.allSatisfy { $0["p"] as? String == "rev" })
            let beta = try #require(revs.first { ($0["docs"] as? [String])?.contains("beta") == true && $0["ty"] as? String == "MSG" })
            #expect(beta["l"] as? Int ?? -1 > beta["i"] as? Int ?? .max, "linked to its reply")
            let alpha = try #require(revs.first { ($0["docs"] as? [String])?.contains("alpha") == true && $0["ty"] as? String == "MSG" })
            let seq = try #require(alpha["i"] as? Int)
            #expect(alpha["l"] as? Int ?? -1 == -1, "NoReply: no reply to link")

            let detail = try await web.json("/api/sessions/\(id)/messages/\(seq)")
            let base64 = try #require(detail["bodyBase64"] as? String)
            let body = try #require(Data(base64Encoded: base64))
            #expect(String(decoding: body, as: UTF8.self).contains("Alpha 2"))
            #expect((detail["properties"] as? [[String]])?.contains { $0[0] == "id" && $0[1] == "alpha" } == true)

            let timeline = try #require(try await web.json("/api/docs/alpha")["events"] as? [[String: Any]])
            let kinds = timeline.compactMap { ($0["event"] as? [String: Any])?["event"] as? String }
            #expect(kinds.contains("offered") && kinds.contains("revSent"))

            let page = try await web.get("/ui")
            #expect(page.status == 200 && page.body.contains("BlipScope"))
            #expect(try await web.get("/api/sessions/999").status == 404)
        }
    }

    @Test func aLiveSessionStreamsItsMessagesAsServerSentEvents() async throws {
        try await withWebRelay(seed: ReplicatorTests.seedGateway) { web in
            let local = GatewayDatabase(name: "local")
            let replicator = web.relayed.replicator(.pull, into: local) { $0.continuous = true }
            let running = Task { try await replicator.run() }
            defer { replicator.stop() }
            let sessionsFeed = try await StreamedGet.start(port: web.adminPort, path: "/api/events", group: web.relayed.gateway.group)
            defer { sessionsFeed.close() }
            let listed = try await sessionsFeed.until { $0.contains("event: sessions") && $0.contains("\"live\":true") }
            #expect(listed.contains("text/event-stream"))
            let id = try #require(web.history.recordings().first?.description.id)

            let feed = try await StreamedGet.start(port: web.adminPort, path: "/api/sessions/\(id)/events?after=-1",
                                                   group: web.relayed.gateway.group)
            defer { feed.close() }
            _ = try await feed.until { $0.contains("event: messages") && $0.contains("subChanges") }
            try web.relayed.gateway.database.put("late-arrival", body: ["name": .string("streamed")])
            let streamed = try await feed.until { $0.contains("late-arrival") }
            #expect(streamed.contains("\"p\":\"rev\""))
            replicator.stop()
            _ = try await running.value
        }
    }

    /// Live feeds are bounded (``WebViewLimits/maxViewers``): one more is answered 503, and a
    /// feed's slot is free again once its viewer goes away.
    @Test func viewersBeyondTheLimitAreRefusedUntilOneLeaves() async throws {
        var limits = WebViewLimits()
        limits.maxViewers = 1
        try await withWebRelay(limits: limits) { web in
            let group = web.relayed.gateway.group
            let first = try await StreamedGet.start(port: web.adminPort, path: "/api/events", group: group)
            _ = try await first.until { $0.contains("event: sessions") }
            let refused = try await web.get("/api/events")
            #expect(refused.status == 503 && refused.body.contains("too many live viewers"))
            #expect(try await web.get("/api/sessions").status == 200, "the JSON pages are not feeds")
            first.close()
            _ = try await first.untilClosed()
            // The relay learns of the close from the socket: ask again, a bounded number of times.
            var admitted: StreamedGet?
            for _ in 0..<200 where admitted == nil {
                let next = try await StreamedGet.start(port: web.adminPort, path: "/api/events", group: group)
                let text = try await next.until { $0.contains("event: sessions") || $0.contains(" 503 ") }
                if text.contains("event: sessions") { admitted = next } else { next.close() }
            }
            #expect(admitted != nil, "the slot of the viewer that left is given to the next")
            admitted?.close()
        }
    }

    /// A session far faster than a person reads: the viewer that reads promptly gets every row
    /// (no sampling), one that stops reading is told what it missed once it reads again, and the
    /// relay waits for neither.
    @Test func aFastSessionReachesAPromptViewerWholeAndAStalledOneGetsTheMissedMarker() async throws {
        var limits = WebViewLimits()
        limits.feedIntervalMilliseconds = 50
        limits.maxViewerBatchBytes = 32 * 1024
        limits.viewerSendBufferBytes = 16 * 1024
        // Half a second untaken makes a viewer behind: a prompt reader on a loaded machine stays
        // well inside it, and the late round trips below give the stalled one three times as long.
        limits.viewerStallPolls = 10
        // The subject here is a viewer that keeps up; the byte rate has its own test below.
        limits.maxViewerBytesPerSecond = 64 * 1024 * 1024
        try await withWebRelay(limits: limits) { web in
            let client = try await web.rawClient()
            _ = try await client.request(BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "fast"]))
            let id = try #require(web.history.recordings().first { $0.snapshot().isLive }?.description.id)
            let group = web.relayed.gateway.group
            let prompt = try await StreamedGet.start(port: web.adminPort, path: "/api/sessions/\(id)/events?after=-1", group: group)
            defer { prompt.close() }
            let stalled = try await StreamedGet.start(port: web.adminPort, path: "/api/sessions/\(id)/events?after=-1", group: group,
                                                      stalled: true)
            defer { stalled.close() }
            _ = try await prompt.untilRows { $0.contains(1) }

            // 2,000 requests sent at once, their replies awaited: 4,000 messages in about a second.
            var replies: [EventLoopFuture<BLIPMessage>] = []
            for index in 0..<2_000 {
                replies.append(try await client.send(BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "fast-\(index)"])))
            }
            for reply in replies { _ = try await reply.get() }
            let total = 4_002
            let rows = try await prompt.untilRows { $0.last == total - 1 }
            #expect(rows == Array(0..<total), "every row, once, in order")
            #expect(!prompt.received.contains("event: missed"))

            // More round trips, each seen by the prompt viewer at a feed interval of its own (a
            // single message waits for the next poll): 30 intervals pass while the stalled viewer
            // still holds its batch, three times what makes it behind.
            for round in 0..<30 {
                _ = try await client.request(BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "late-\(round)"]))
                let last = total + 2 * round + 1
                _ = try await prompt.untilRows { $0.last == last }
            }
            try await stalled.resume()
            let caught = try await stalled.until { $0.contains("event: missed") }
            #expect(caught.contains("event: missed"), "the stalled viewer is told it missed messages")
            #expect(StreamedGet.rowSeqs(caught).count < total, "and was not sent them all")
            try await client.close()
        }
    }

    /// However fast the session, a viewer is sent at most its byte rate (plus one second's
    /// bucket): it lags behind the session instead of costing the relay more.
    @Test func aViewerOfAFastSessionGetsNoMoreThanItsByteRate() async throws {
        var limits = WebViewLimits()
        limits.feedIntervalMilliseconds = 50
        let rate = 16 * 1024
        limits.maxViewerBytesPerSecond = rate
        try await withWebRelay(limits: limits) { web in
            let client = try await web.rawClient()
            _ = try await client.request(BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "fast"]))
            let id = try #require(web.history.recordings().first { $0.snapshot().isLive }?.description.id)
            let viewer = try await StreamedGet.start(port: web.adminPort, path: "/api/sessions/\(id)/events?after=-1",
                                                     group: web.relayed.gateway.group)
            defer { viewer.close() }
            let opened = ContinuousClock.now
            var replies: [EventLoopFuture<BLIPMessage>] = []
            for index in 0..<2_000 {
                replies.append(try await client.send(BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "fast-\(index)"])))
            }
            for reply in replies { _ = try await reply.get() }
            // Three seconds' worth arrived: however long that took, no more than the rate allows.
            let text = try await viewer.until { $0.utf8.count > 3 * rate }
            let elapsed = ContinuousClock.now - opened
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rows = StreamedGet.rowSeqs(text)
            #expect(rows == Array(0..<rows.count), "the rows it got are the session's first, in order")
            #expect(rows.count < 4_002, "the viewer lags behind the session")
            #expect(Double(text.utf8.count) <= Double(rate) * (seconds + 1) + 8 * 1024,
                    "\(text.utf8.count) bytes in \(seconds) s")
            try await client.close()
        }
    }

    /// A document too big for one frame and too random to deflate much: its `rev` crosses in many
    /// frames, and the replicator ACKs each 50,000 bytes of it as they arrive.
    @Test func aLargeRevListsItsFramesAndTheAcksItsReceiverSent() async throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let noise = String((0..<300_000).map { _ -> Character in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Character(UnicodeScalar(UInt8(97 + (state >> 33) % 26)))
        })
        try await withWebRelay(seed: { try $0.put("big", body: ["name": .string(noise)]) }) { web in
            let local = GatewayDatabase(name: "local")
            _ = try await web.relayed.replicator(.pull, into: local).run()
            await web.relayed.recorder.waitForClosedSessions(1)
            let id = try #require(web.history.recordings().first?.description.id)
            let revs = try #require(try await web.json("/api/sessions/\(id)/messages?profile=rev")["rows"] as? [[String: Any]])
            let big = try #require(revs.first { ($0["docs"] as? [String])?.contains("big") == true && $0["ty"] as? String == "MSG" })
            let detail = try await web.json("/api/sessions/\(id)/messages/\(try #require(big["i"] as? Int))")
            let frames = try #require(detail["frameList"] as? [[String: Any]])
            #expect(frames.count >= 300_000 / (16 * 1024), "every frame of the rev, the last one too")
            let acks = try #require(detail["ackList"] as? [[String: Any]])
            #expect(acks.count >= 2 && detail["acks"] as? Int == acks.count)
            #expect(acks.allSatisfy { $0["from"] as? Int == 0 }, "sent by the client, the rev's receiver")
            let counts = acks.compactMap { $0["bytes"] as? Int }
            #expect(counts == counts.sorted() && counts.first! >= 50_000, "running totals, each past the threshold")
        }
    }

    @Test func aCheckpointLoopIsAFindingThatCitesItsMessage() async throws {
        try await withWebRelay { web in
            try await web.provokeCheckpointLoop()
            await web.relayed.recorder.waitForClosedSessions(1)
            let id = try #require(web.history.recordings().first?.description.id)
            let findings = try #require(try await web.json("/api/sessions/\(id)/findings")["findings"] as? [[String: Any]])
            let loop = try #require(findings.first { ($0["finding"] as? [String: Any])?["kind"] as? String == "checkpointConflictLoop" })
            let seq = try #require(loop["seq"] as? Int)
            let cited = try await web.json("/api/sessions/\(id)/messages/\(seq)")
            #expect((cited["row"] as? [String: Any])?["p"] as? String == "setCheckpoint")
        }
    }
}
