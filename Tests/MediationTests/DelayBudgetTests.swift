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
        let link = MediatedLink(policy: ServerAckHoldingPolicy())
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

extension DelayBudgetTests {
    @Test("requests that pass but queue behind a delayed one count while it waits for its timer, and leave with it")
    func requestsQueuedBehindADelayedOneAreCounted() throws {
        var limits = MediationLimits()
        limits.maxDelayedBytes = 32 * 1024
        let link = MediatedLink(policy: ScriptedPolicy(onHead: { head in
            head.type == .request && head.profile == "slow" ? .delay(.milliseconds(300), rule: "slow") : .pass
        }), limits: limits)
        let body = String(repeating: "x", count: 16 * 1024)
        link.client.send(request: .request(profile: "slow", properties: ["seq": "1"], body: ByteBuffer(string: "tiny")))
        try link.pump()
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))

        // Three fast requests pass the policy, but none may overtake the delayed one (§4.3).
        for seq in 2...4 {
            link.client.send(request: .request(profile: "fast", properties: ["seq": String(seq)], body: ByteBuffer(string: body)))
        }
        try link.pump()
        #expect(link.serverReceived.isEmpty)
        #expect(link.mediator.gatedBytes(.clientToServer) >= 3 * body.utf8.count)
        #expect(link.mediator.isOverDelayBudget(.clientToServer))

        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.mediator.gatedBytes(.clientToServer) == 0)
        #expect(link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3", "4"])
        #expect(link.mediator.peakDelayedBytes(.clientToServer) >= 3 * body.utf8.count)
    }

    @Test("a request its body rule lets through behind a delayed one waits in the gate, counted until it leaves")
    func bodyRulePassedRequestsBehindADelayedOneAreCounted() throws {
        var limits = MediationLimits()
        limits.maxDelayedBytes = 32 * 1024
        let link = MediatedLink(policy: ScriptedPolicy(
            onHead: { head in
                guard head.type == .request else { return .pass }
                return head.profile == "slow" ? .delay(.milliseconds(300), rule: "slow")
                    : head.profile == "rev" ? .awaitBody(rule: "look") : .pass
            },
            onBody: { _, _ in .pass }), limits: limits)
        link.client.send(request: .request(profile: "slow", properties: ["seq": "1"], body: ByteBuffer(string: "tiny")))
        try link.pump()
        var random = SeededRandom(seed: 11)
        for seq in 2...3 {
            link.client.send(request: .request(profile: "rev", properties: ["seq": String(seq)],
                                               body: ByteBuffer(bytes: random.bytes(20_000))))
        }
        try link.pump()
        #expect(link.serverReceived.isEmpty)
        #expect(link.mediator.gatedBytes(.clientToServer) >= 40_000, "both wait, whole, behind the delayed one")
        #expect(link.mediator.isOverDelayBudget(.clientToServer), "so the client is not read on")

        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.mediator.gatedBytes(.clientToServer) == 0)
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3"])
        #expect(link.serverReceived.dropFirst().map(\.body.readableBytes) == [20_000, 20_000])
    }

    @Test("requests queued behind one awaiting its body do not stop reading: only more frames move the gate")
    func requestsBehindABodyRuleAreNotBudgeted() throws {
        var limits = MediationLimits()
        limits.maxDelayedBytes = 1024
        let link = MediatedLink(policy: ScriptedPolicy(
            onHead: { $0.type == .request && $0.profile == "rev" ? .awaitBody(rule: "look") : .pass },
            onBody: { _, _ in .pass }), limits: limits)
        var random = SeededRandom(seed: 9)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"], body: ByteBuffer(bytes: random.bytes(60_000))))
        link.client.send(request: .request(profile: "fast", properties: ["seq": "2"],
                                           body: ByteBuffer(string: String(repeating: "y", count: 8 * 1024))))
        try link.clientStep()
        try link.clientStep()
        #expect(!link.mediator.isOverDelayBudget(.clientToServer))
        try link.pump()
        #expect(link.mediator.gatedBytes(.clientToServer) == 0)
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2"])
    }
}
