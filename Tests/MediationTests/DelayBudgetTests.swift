import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// What the mediator holds for timers, per direction, against ``MediationLimits/maxDelayedBytes``:
/// the count the relay's shell stops reading on.
@Suite struct DelayBudgetTests {
    /// A request's held bytes are its properties and body as received, uncompressed.
    static let overhead = 0...64

    @Test("delayed requests raise the count past the budget; each fired timer lowers it, and all leave in order")
    func delayedMessagesAreCounted() throws {
        var limits = MediationLimits()
        limits.maxDelayedBytes = 32 * 1024
        let link = MediatedLink(policy: ScriptedPolicy(onHead: { head in
            head.direction == .clientToServer && head.type == .request ? .delay(.milliseconds(300), rule: "slow") : .pass
        }), limits: limits)
        let body = String(repeating: "x", count: 16 * 1024)

        link.clientRequest(1, body: body)
        try link.pump()
        let one = link.mediator.delayedBytes(.clientToServer)
        #expect(Self.overhead.contains(one - body.utf8.count))
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))

        link.clientRequest(2, body: body)
        link.clientRequest(3, body: body)
        try link.pump()
        #expect(link.mediator.delayedBytes(.clientToServer) == 3 * one)
        #expect(link.mediator.isOverDelayBudget(.clientToServer))
        #expect(link.mediator.delayedBytes(.serverToClient) == 0)
        #expect(link.serverReceived.isEmpty && link.timers.count == 3)

        // The first timer leaves two held: 2 × (16 KiB + properties) is still over 32 KiB.
        try link.fire(link.timers[0])
        #expect(link.mediator.delayedBytes(.clientToServer) == 2 * one)
        #expect(link.mediator.isOverDelayBudget(.clientToServer))
        try link.fire(link.timers[1])
        #expect(link.mediator.delayedBytes(.clientToServer) == one)
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))
        try link.fire(link.timers[2])
        try link.pump()
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(link.mediator.peakDelayedBytes(.clientToServer) == 3 * one)
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3"])
    }

    @Test("a message awaiting its body is not counted until its body verdict delays it")
    func bodyAwaitingMessagesAreNotCounted() throws {
        var limits = MediationLimits()
        limits.maxDelayedBytes = 1024
        let link = MediatedLink(policy: ScriptedPolicy(
            onHead: { $0.type == .request && $0.profile == "rev" ? .awaitBody(rule: "look") : .pass },
            onBody: { _, _ in BodyDecision(.delay(.milliseconds(50)), rule: "thin-pipe") }), limits: limits)
        var random = SeededRandom(seed: 5)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"],
                                           body: ByteBuffer(bytes: random.bytes(40_000))))
        // Its first frames are held for the body rule, far over the budget, yet not counted:
        // reading on is the only way the message completes.
        try link.clientStep()
        try link.clientStep()
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))

        try link.pump()
        #expect(link.timers.count == 1)
        let whole = link.mediator.delayedBytes(.clientToServer)
        #expect(Self.overhead.contains(whole - 40_000))
        #expect(link.mediator.isOverDelayBudget(.clientToServer))

        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(link.serverReceived.map(\.body.readableBytes) == [40_000])
    }

    @Test("withheld ACK frames count toward the direction whose sender sent them, until released")
    func withheldAcksAreCounted() throws {
        final class HoldingPolicy: MediationPolicy {
            func decide(head: MediatedHead) -> HeadDecision { .pass }
            func decide(body: BLIPMessage, head: MediatedHead) -> BodyDecision { .pass }
            func holdAck(_ ack: AckInfo, travelling direction: BLIPDirection) -> TimeAmount? {
                direction == .serverToClient ? .seconds(2) : nil
            }
        }
        let link = MediatedLink(policy: HoldingPolicy())
        var random = SeededRandom(seed: 3)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"], body: ByteBuffer(bytes: random.bytes(200_000))))
        try link.pump()
        #expect(link.timers.count == 2)
        #expect((2...32).contains(link.mediator.delayedBytes(.serverToClient)))
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        for timer in link.timers { try link.fire(timer) }
        #expect(link.mediator.delayedBytes(.serverToClient) == 0)
    }
}
