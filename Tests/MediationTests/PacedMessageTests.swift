import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// A paced message (``HeadDecision/Action/pace(bytesPerSecond:)``, the relay's `bandwidth`
/// action) crosses the relay as a slow link would carry it: each frame waits until the link has
/// carried it, then leaves, in order. The receiver sees the message arrive at the link's rate, and
/// the relay holds only the frames the link has not carried yet, never the whole message.
@Suite struct PacedMessageTests {
    static let rate = 100_000
    static let size = 100_000

    static func bulk(seed: UInt64) -> ByteBuffer { compressibleText(size, seed: seed, tag: "p") }

    /// One direction's link, as the relay's `bandwidth` action models it: the frames of paced
    /// messages take turns. (On the test link's standing clock every frame arrives at once, so
    /// each waits for the ones before it plus its own transfer.)
    final class Link {
        var busy = TimeAmount.zero
        func hold(_ bytes: Int, _ rate: Int) -> TimeAmount {
            busy = busy + .nanoseconds(Int64(bytes) * 1_000_000_000 / Int64(rate))
            return busy
        }
    }

    /// Paces messages of `profile` (a reply: answering it) of `type` at `rate`, on one link.
    static func pacing(_ profile: String, type: MessageType = .request, rate: Int = rate) -> ScriptedPolicy {
        let link = Link()
        let policy = ScriptedPolicy(onHead: { head in
            head.type == type && (head.profile == profile || head.requestProfile == profile)
                ? .pace(bytesPerSecond: rate, rule: "thin-pipe") : .pass
        })
        policy.onTransfer = { bytes, _, rate in link.hold(bytes, rate) }
        return policy
    }

    @Test("a paced request leaves frame by frame as the link carries it, and arrives byte for byte",
          arguments: [false, true])
    func framesLeaveAsTheLinkCarriesThem(compressed: Bool) throws {
        let link = MediatedLink(policy: Self.pacing("bulk"))
        let body = Self.bulk(seed: 1)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: compressed))
        try link.pump()

        #expect(link.serverReceived.isEmpty)
        #expect(link.armed.count == 1, "one timer at a time, for the next frame due")
        #expect(link.mediator.delayedBytes(.clientToServer) > Self.size, "every frame is held (properties and body, uncompressed)")
        var wakeUps = 0
        while link.mediator.delayedBytes(.clientToServer) > 17_000, let next = link.armed.first {
            try link.fire(next.timer)
            wakeUps += 1
        }
        #expect(wakeUps > 1, "the frames left at the link's pace, not at once")
        #expect(link.serverReceived.isEmpty, "the last frame is still on the link")
        try link.fireAll()
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

    @Test("frames a fast link carries within a millisecond leave together: one wake-up, not one per frame")
    func aFastLinkReleasesFramesTogether() throws {
        let link = MediatedLink(policy: Self.pacing("bulk", rate: 1 << 30))
        let body = Self.bulk(seed: 2)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(link.armed.count == 1)
        try link.fire(link.armed[0].timer)
        try link.pump()
        #expect(link.serverReceived.map(\.body) == [body])
        #expect(link.timers.count == 1, "the 100 kB took about 0.1 ms of the link: all of it left at the first timer")
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

        try link.fire(link.armed[0].timer)
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["2"], "it overtakes the rest of the paced request's frames")
        #expect(link.serverReceived.first?.number == 2, "numbered after the paced request, which left first")
        try link.fireAll()
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
        while link.mediator.isOverDelayBudget(.clientToServer), let next = link.armed.first { try link.fire(next.timer) }
        #expect(link.mediator.delayedBytes(.clientToServer) > 0, "reading may resume before the link is empty")
        #expect(link.mediator.delayedBytes(.clientToServer) <= limits.maxDelayedBytes)
        try link.fireAll()
        try link.pump()
        #expect(link.serverReceived.count == 1 && link.mediator.delayedBytes(.clientToServer) == 0)
    }

    @Test("a paced reply is carried frame by frame too, back in its requester's numbering")
    func pacedReply() throws {
        let link = MediatedLink(policy: Self.pacing("fetch", type: .response))
        link.answerServerRequests = false
        link.clientRequest(1, profile: "fetch")
        try link.pump()
        let request = try #require(link.serverReceived.first)
        let body = Self.bulk(seed: 5)
        link.server.send(reply: BLIPMessage.reply(to: request, properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(link.clientReceived.isEmpty)
        try link.fireAll()
        #expect(link.clientReceived.map(\.body) == [body])
        #expect(link.clientReceived.first?.number == 1)
        #expect(link.timers.count > 1)
        #expect(link.mediator.delayedBytes(.serverToClient) == 0)
    }
}
