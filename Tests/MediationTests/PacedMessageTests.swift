import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// A paced message (``HeadDecision/Action/pace(bytesPerSecond:)``, the relay's `bandwidth`
/// action) crosses the relay as a slow link would carry it: each frame waits for its own transfer
/// time, then leaves, in order. The receiver sees the message arrive at the link's rate, and the
/// relay holds only the frames the link has not carried yet, never the whole message.
@Suite struct PacedMessageTests {
    static let rate = 100_000
    static let size = 100_000

    static func bulk(seed: UInt64) -> ByteBuffer {
        var random = SeededRandom(seed: seed)
        var text = ""
        while text.utf8.count < size { text += "p\(random.next() % 100_000)," }
        return ByteBuffer(string: String(text.prefix(size)))
    }

    static func pacing(_ profile: String, type: MessageType = .request) -> ScriptedPolicy {
        ScriptedPolicy(onHead: { head in
            head.type == type && (head.profile == profile || head.requestProfile == profile)
                ? .pace(bytesPerSecond: rate, rule: "thin-pipe") : .pass
        })
    }

    @Test("a paced request leaves frame by frame as the link carries it, and arrives byte for byte",
          arguments: [false, true])
    func framesLeaveAsTheirTimersFire(compressed: Bool) throws {
        let link = MediatedLink(policy: Self.pacing("bulk"))
        let body = Self.bulk(seed: 1)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: compressed))
        try link.pump()

        let frames = link.timers.count
        #expect(frames > 1, "one timer per frame of a message of many frames")
        #expect(link.serverReceived.isEmpty)
        let held = link.mediator.delayedBytes(.clientToServer)
        #expect(held > Self.size, "every frame is held for the link (properties and body, uncompressed)")
        // Each frame's hold is its own transfer time at 100 kB/s (the default: no link shared).
        #expect(link.timers.allSatisfy { $0.delay <= .milliseconds(170) })

        for timer in link.timers.dropLast() { try link.fire(timer) }
        #expect(link.serverReceived.isEmpty, "the last frame is still on the link")
        #expect(link.mediator.delayedBytes(.clientToServer) > 0 && link.mediator.delayedBytes(.clientToServer) < 17_000,
                "only the last frame is still held")
        try link.fire(link.timers.last!)
        try link.pump()
        #expect(link.serverReceived.map(\.body) == [body], "the receiver checks every CRC and inflates every frame")
        #expect(link.clientReceived.map { $0.properties["seq"] } == ["1"], "and its reply comes back")
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(link.mediator.bytesInProgress == 0)

        let report = try #require(link.reports.first)
        #expect(link.reports.count == 1, "pacing is reported once per message, not per frame")
        #expect(report.rule == "thin-pipe" && report.action.hasPrefix("pace 100000 B/s, first frame"))
        #expect(report.delay == link.timers.first?.delay)
    }

    @Test("frames leave in the order they came even when their timers fire out of order")
    func framesKeepTheirOrder() throws {
        let link = MediatedLink(policy: Self.pacing("bulk"))
        let body = Self.bulk(seed: 2)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        for timer in link.timers.reversed() { try link.fire(timer) }
        try link.pump()
        #expect(link.serverReceived.map(\.body) == [body])
    }

    @Test("a paced request keeps later requests behind it until its first frame is through (§4.3)")
    func laterRequestsWaitForTheFirstFrame() throws {
        let link = MediatedLink(policy: Self.pacing("bulk"))
        let body = Self.bulk(seed: 3)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body))
        link.clientRequest(2, profile: "small", body: "after")
        try link.pump()
        #expect(link.serverReceived.isEmpty, "the small request may not start before the paced one")
        #expect(link.mediator.gatedBytes(.clientToServer) > 0)
        #expect(link.mediator.isOverDelayBudget(.clientToServer) == false)

        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["2"], "it overtakes the rest of the paced request's frames")
        #expect(link.serverReceived.first?.number == 2, "numbered after the paced request, which left first")
        for timer in link.timers.dropFirst() { try link.fire(timer) }
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["2", "1"])
        #expect(link.serverReceived.last?.body == body)
        #expect(link.clientReceived.compactMap { $0.properties["seq"] }.sorted() == ["1", "2"])
    }

    @Test("what the link has not carried counts against the delay budget, so the shell pauses the sender")
    func heldFramesCountAgainstTheBudget() throws {
        var limits = MediationLimits.default
        limits.maxDelayedBytes = 32 * 1024
        let link = MediatedLink(policy: Self.pacing("bulk"), limits: limits)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: Self.bulk(seed: 4)))
        try link.pump()
        #expect(link.mediator.isOverDelayBudget(.clientToServer), "this pure link delivers every frame at once")
        let held = link.mediator.delayedBytes(.clientToServer)
        #expect(link.mediator.peakDelayedBytes(.clientToServer) == held)
        let count = link.timers.count
        for timer in link.timers.prefix(count - 2) { try link.fire(timer) }
        #expect(link.mediator.isOverDelayBudget(.clientToServer) == false, "two frames left on the link")
    }

    @Test("a paced reply is carried frame by frame too, back in its requester's numbering")
    func pacedReply() throws {
        let policy = ScriptedPolicy(onHead: { head in
            head.type == .response && head.direction == .serverToClient ? .pace(bytesPerSecond: Self.rate) : .pass
        })
        let link = MediatedLink(policy: policy)
        link.answerServerRequests = false
        link.clientRequest(1, profile: "fetch")
        try link.pump()
        let request = try #require(link.serverReceived.first)
        let body = Self.bulk(seed: 5)
        link.server.send(reply: BLIPMessage.reply(to: request, properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(link.clientReceived.isEmpty)
        for timer in link.timers { try link.fire(timer) }
        #expect(link.clientReceived.map(\.body) == [body])
        #expect(link.clientReceived.first?.number == 1)
        #expect(link.mediator.delayedBytes(.serverToClient) == 0)
    }
}
