import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOCore
import Policy
import Testing
@testable import Relay

/// A relay with a policy file's message rules, between BLIPNIO peers: each rule's verdict is
/// carried out on the wire, reported as a verdict event, and the session goes on where it should.
@Suite struct RelayMessagePolicyTests {
    static func harness(_ yaml: String, dryRun: Bool = false,
                        clock: @escaping @Sendable () -> UInt64 = PolicyClock.now) async throws -> RelayHarness {
        let store = PolicyStore(document: try PolicyDocument(yaml: yaml), dryRun: dryRun)
        return try await RelayHarness.start(relay: { $0.policy = store; $0.policyDryRun = dryRun; $0.policyClock = clock })
    }

    static func verdicts(_ harness: RelayHarness) -> [VerdictEvent] {
        harness.recorder.all.compactMap { if case .verdict(let verdict) = $0 { verdict } else { nil } }
    }

    @Test func aDeniedRequestGetsTheRulesErrorAndLaterRequestsStillWork() async throws {
        let harness = try await Self.harness("""
            rules:
              - name: no-secrets
                match: { from: client, profile: secret }
                action: { deny: { domain: HTTP, code: 403, message: "not through this relay" } }
            """)
        let client = try await harness.connected()
        let first = try await withTimeout { try await client.request(.request(profile: "echo", body: body("one"), compressed: true)) }
        #expect(first.type == .response)
        let denied = try await withTimeout { try await client.request(.request(profile: "secret", body: body("s"), compressed: true)) }
        #expect(denied.type == .error)
        #expect(denied.properties["Error-Domain"] == "HTTP")
        #expect(denied.properties["Error-Code"] == "403")
        #expect(String(buffer: denied.body) == "not through this relay")
        // The upstream never saw it: its next request number is the client's #3 as #2, compressed
        // on a deflate stream the relay re-encoded.
        for index in 0..<5 {
            let reply = try await withTimeout {
                try await client.request(.request(profile: "echo", body: body("after-\(index)"), compressed: true))
            }
            #expect(String(buffer: reply.body) == "after-\(index)")
        }
        let verdict = try #require(Self.verdicts(harness).first)
        #expect(verdict.rule == "no-secrets")
        #expect(verdict.metricAction == "deny")
        #expect(verdict.profile == "secret")
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        try await harness.shutdown()
    }

    @Test func aDryRunRuleIsReportedAndTheTrafficIsUntouched() async throws {
        let harness = try await Self.harness("""
            rules:
              - name: would-deny
                match: { profile: secret }
                action: { deny: { code: 403 } }
            """, dryRun: true)
        let client = try await harness.connected()
        let reply = try await withTimeout { try await client.request(.request(profile: "secret", body: body("s"))) }
        #expect(reply.type == .response, "a dry run forwards the request")
        let verdict = try #require(Self.verdicts(harness).first)
        #expect(verdict.action.hasPrefix("dry-run deny"))
        #expect(verdict.metricAction == "dry_run")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    @Test(arguments: [UInt16(4001), 4002, 1011])
    func aCloseFaultEndsTheSessionWithItsCodeOnBothSides(code: UInt16) async throws {
        let harness = try await Self.harness("""
            rules:
              - name: flaky
                match: { from: client, profile: echo }
                action: { close: { code: \(code), reason: "injected", afterMessages: 3 } }
            """)
        let client = try await harness.connected()
        let server = try await harness.upstream()
        for index in 0..<2 {
            let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("\(index)"))) }
            #expect(reply.type == .response)
        }
        _ = try? await client.send(.request(profile: "echo", body: body("third")))
        let clientSaw = try await withTimeout { try await client.closed.get() }
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(clientSaw.code == code)
        #expect(upstreamSaw.code == code)
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError?.code == "policy_close")
        try await harness.shutdown()
    }

    @Test func anAbruptCloseFaultDropsBothConnectionsWithoutACloseFrame() async throws {
        let harness = try await Self.harness("""
            rules:
              - name: cable-pulled
                match: { from: client, profile: unplug }
                action: { close: { code: 1006 } }
            """)
        let client = try await harness.connected()
        let server = try await harness.upstream()
        _ = try? await client.send(.request(profile: "unplug"))
        let clientSaw = try await withTimeout { try await client.closed.get() }
        let upstreamSaw = try await withTimeout { try await server.closed.get() }
        #expect(clientSaw.abrupt)
        #expect(upstreamSaw.abrupt)
        try await harness.shutdown()
    }

    @Test func latencyBandwidthAndWithheldAcksHoldTrafficAndLetItThrough() async throws {
        // The policy's clock stands still, so `withholdAcks`' window is still open when the
        // upstream's first ACK of `bulk` comes back, however loaded the machine is; each ACK is
        // then held its full 100 ms.
        let instant = PolicyClock.now()
        let harness = try await Self.harness("""
            rules:
              - name: slow-replies
                match: { from: client, profile: slow }
                action: { replyLatency: { latency: 50ms } }
              - name: thin-pipe
                match: { from: client, profile: big }
                action: { bandwidth: 4MB }
              - name: sticky-acks
                match: { from: client, profile: bulk }
                action: { withholdAcks: 100ms }
            """, clock: { instant })
        let client = try await harness.connected()
        let slow = try await withTimeout { try await client.request(.request(profile: "slow", body: body("s"))) }
        #expect(String(buffer: slow.body) == "s")
        let bigBody = String(repeating: "b", count: 20_000)
        let big = try await withTimeout { try await client.request(.request(profile: "big", body: body(bigBody))) }
        #expect(big.body.readableBytes == 20_000)
        let bulkBody = String(repeating: "0123456789", count: 60_000)  // 600 kB: the upstream ACKs it
        let bulk = try await withTimeout { try await client.request(.request(profile: "bulk", body: body(bulkBody))) }
        #expect(bulk.body.readableBytes == bulkBody.utf8.count)
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()  // every event of the session is in by now
        #expect(summary.relayError == nil)
        let verdicts = Self.verdicts(harness)
        // The reply to `slow` was held (reported by the mediator as a delay of the reply).
        #expect(verdicts.contains { $0.rule == "slow-replies" && $0.action.hasPrefix("replyLatency") })
        #expect(verdicts.contains { $0.type.isReply && $0.number == 1 && $0.action.hasPrefix("delay") })
        // `big` was paced: each frame held for its size ÷ rate.
        #expect(verdicts.contains { $0.rule == "thin-pipe" && $0.action.hasPrefix("pace") && $0.kind == .fault })
        // The upstream's ACKs of `bulk` were held on their way back to the client.
        #expect(verdicts.contains { $0.rule == "sticky-acks" && $0.action.hasPrefix("withholdAcks") })
        #expect(verdicts.contains { $0.action.hasPrefix("hold-ack") })
        try await harness.shutdown()
    }

    @Test func bandwidthSpreadsOutMessagesSentTogether() async throws {
        // The policy's clock stands still: every request arrives at the same instant however
        // loaded the machine is, so the holds depend on the link alone.
        let instant = PolicyClock.now()
        let harness = try await Self.harness("""
            rules:
              - name: thin-pipe
                match: { from: client, profile: big }
                action: { bandwidth: 20KB }
            """, clock: { instant })
        let client = try await harness.connected()
        // Three 10 kB requests on a 20 KiB/s link: about 0.5 s each, one after the other, so held
        // about 0.5, 1 and 1.5 s. Each on a link of its own would be held 0.5 s.
        let bigBody = String(repeating: "b", count: 10_000)
        let sent = try await client.onLoop { handler in
            (0..<3).map { _ in handler.sendRequest(.request(profile: "big", body: body(bigBody))) }
        }
        var replies: [Int] = []
        for reply in sent { replies.append(try await withTimeout { try await reply.get().body.readableBytes }) }
        #expect(replies == [10_000, 10_000, 10_000])
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        let holds = Self.verdicts(harness).filter { $0.rule == "thin-pipe" && $0.action.hasPrefix("pace ") }
            .compactMap { $0.delay.map { Int($0.nanoseconds / 1_000_000) } }
        try #require(holds.count == 3, "\(Self.verdicts(harness).map(\.action))")
        // Each request is one frame, so its first frame's hold is its whole: one transfer (10,000
        // body bytes and a few of properties at 20 KiB/s: 488 ms), then two, then three, each cut
        // to whole milliseconds.
        #expect((488...490).contains(holds[0]), "holds \(holds) ms")
        #expect(abs(holds[1] - 2 * holds[0]) <= 2 && abs(holds[2] - 3 * holds[0]) <= 2, "holds \(holds) ms")
        try await harness.shutdown()
    }

    @Test("a 1 MiB request on a bandwidth rule crosses frame by frame: the relay holds what the link has not carried, never the whole message")
    func bandwidthHoldsOnlyWhatTheLinkHasNotCarried() async throws {
        let budget = 64 * 1024
        let store = PolicyStore(document: try PolicyDocument(yaml: """
            rules:
              - name: thin-pipe
                match: { from: client, profile: big }
                action: { bandwidth: 8MB }
            """))
        let harness = try await RelayHarness.start(relay: {
            $0.policy = store
            $0.mediationLimits.maxDelayedBytes = budget
        })
        let client = try await harness.connected()
        // 1 MiB in 64 frames of 16 KiB, written as fast as the socket takes them: the link (about
        // 0.13 s) is far slower than loopback, so frames pile up in the relay until it stops
        // reading the client.
        var random = SeededRandom(seed: 18)
        let payload = ByteBuffer(bytes: (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let reply = try await withTimeout {
            try await client.request(.request(profile: "big", properties: ["seq": "1"], body: payload, compressed: true))
        }
        #expect(reply.body == payload, "every frame's CRC and deflate byte checked by the upstream, echoed back")
        let after = try await withTimeout { try await client.request(.request(profile: "echo", body: body("after"))) }
        #expect(String(buffer: after.body) == "after")
        try await client.close()
        let summary = try await harness.recorder.sessionClosed()
        #expect(summary.relayError == nil)
        let verdicts = Self.verdicts(harness).filter { $0.rule == "thin-pipe" }
        #expect(verdicts.count == 1 && verdicts[0].action.hasPrefix("pace ") && verdicts[0].action.contains("B/s, first frame"), "\(verdicts.map(\.action))")
        // Held for the link at once: within the budget plus what one read batch brings in after it
        // was reached (NIO's 4 socket reads of at most 64 KiB) and the rest of a frame. Held
        // whole until its size ÷ rate was up, it would have been all 1 MiB.
        let peak = summary.statistics.maxDelayedBytes[BLIPDirection.clientToServer.rawValue]
        #expect(peak > 0)
        #expect(peak <= budget + 4 * 64 * 1024 + 16 * 1024, "peak \(peak)")
        try await harness.shutdown()
    }

    @Test func collectionRulesMatchTheIndexTheSessionsGetCollectionsNamed() async throws {
        let harness = try await Self.harness("""
            rules:
              - name: frozen-inventory
                match: { from: client, profile: rev, collection: "inventory.*" }
                action: { deny: { code: 403, message: "inventory is read-only" } }
            """)
        let client = try await harness.connected()
        let collections = #"{"collections":["inventory.items","sales.orders"],"checkpoint_ids":["a","b"]}"#
        _ = try await withTimeout { try await client.request(.request(profile: "getCollections", body: body(collections))) }
        let toSales = try await withTimeout {
            try await client.request(.request(profile: "rev", properties: ["id": "o1", "rev": "1-a", "collection": "1"],
                                              body: body("{}")))
        }
        #expect(toSales.type == .response, "collection 1 is sales.orders")
        let toInventory = try await withTimeout {
            try await client.request(.request(profile: "rev", properties: ["id": "i1", "rev": "1-a", "collection": "0"],
                                              body: body("{}")))
        }
        #expect(toInventory.type == .error, "collection 0 is inventory.items")
        #expect(String(buffer: toInventory.body) == "inventory is read-only")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    @Test func attachmentRulesReadTheRevBodysAttachments() async throws {
        let harness = try await Self.harness("""
            rules:
              - name: no-big-videos
                match: { from: client, profile: rev, attachment: { contentType: "video/*", minSize: 1KB } }
                action: { deny: { code: 413, message: "no videos" } }
            """)
        let client = try await harness.connected()
        @Sendable func rev(_ id: String, _ type: String, _ length: Int) -> BLIPMessage {
            .request(profile: "rev", properties: ["id": id, "rev": "1-a"], body: body("""
                {"_attachments":{"a":{"content_type":"\(type)","length":\(length),"digest":"sha1-x","stub":true}}}
                """))
        }
        let photo = try await withTimeout { try await client.request(rev("p", "image/png", 50_000)) }
        #expect(photo.type == .response)
        let clip = try await withTimeout { try await client.request(rev("v", "video/mp4", 50_000)) }
        #expect(clip.type == .error)
        #expect(clip.properties["Error-Code"] == "413")
        let tiny = try await withTimeout { try await client.request(rev("t", "video/mp4", 10)) }
        #expect(tiny.type == .response, "under minSize")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    @Test func aRateLimitThatDeniesAnswers429OnceTheBurstIsSpent() async throws {
        // A frozen policy clock: the bucket never refills, however slowly the requests come.
        let instant = PolicyClock.now()
        let harness = try await Self.harness("""
            rules:
              - name: one-per-minute
                match: { from: client, profile: echo }
                action: { rateLimit: { perSecond: 0.0167, burst: 2, key: session, onExceed: deny } }
            """, clock: { instant })
        let client = try await harness.connected()
        var types: [MessageType] = []
        for index in 0..<4 {
            let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("\(index)"))) }
            types.append(reply.type)
            if reply.type == .error { #expect(reply.properties["Error-Code"] == "429") }
        }
        #expect(types == [.response, .response, .error, .error], "the burst of two passes, then 429")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()  // every event of the session is in by now
        #expect(Self.verdicts(harness).filter { $0.rule == "one-per-minute" }.count == 2)
        try await harness.shutdown()
    }

    @Test func aMessageHeldForItsBodyIsCountedOnceByTheOtherRules() async throws {
        // A frozen policy clock: the bucket never refills, however slowly the requests come.
        let instant = PolicyClock.now()
        let harness = try await Self.harness("""
            rules:
              - name: two-revs
                match: { from: client, profile: rev }
                action: { rateLimit: { perSecond: 0.0167, burst: 2, key: session, onExceed: deny } }
              - name: no-huge-revs
                match: { from: client, profile: rev, minBodySize: 1MB }
                action: { deny: { code: 413 } }
            """, clock: { instant })
        let client = try await harness.connected()
        var types: [MessageType] = []
        for index in 0..<3 {
            let reply = try await withTimeout {
                try await client.request(.request(profile: "rev", properties: ["id": "d\(index)", "rev": "1-a"], body: body("{}")))
            }
            types.append(reply.type)
        }
        #expect(types == [.response, .response, .error], "each rev takes one token although it waited for its body")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }
}
