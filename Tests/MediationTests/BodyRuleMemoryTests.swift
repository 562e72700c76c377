import BLIPCore
import BLIPTestSupport
import NIOCore
import Testing
@testable import Mediation

/// A message a policy decides on by its body (``HeadDecision/Action/awaitBody``) is assembled by
/// its direction's decoder for the decision; the mediator does not also copy its frames as they
/// arrive. If the rule lets it go, now or after a delay, it leaves framed anew from the assembled
/// message: properties and body exactly as sent, in frames the receiver checks like any others.
@Suite struct BodyRuleMemoryTests {
    /// Bytes the mediator holds of messages travelling from the client, outside the decoder.
    static func held(_ link: MediatedLink) -> Int {
        link.mediator.lanes[BLIPDirection.clientToServer.rawValue].messages.values.reduce(0) { $0 + $1.heldBytes }
    }

    @Test("a message its body rule lets through is in memory once, and leaves exactly as sent",
          arguments: [false, true])
    func bodyRuleMessageIsHeldOnce(delayed: Bool) throws {
        let link = MediatedLink(policy: ScriptedPolicy(
            onHead: { $0.type == .request && $0.profile == "rev" ? .awaitBody(rule: "look") : .pass },
            onBody: { _, _ in delayed ? BodyDecision(.delay(.milliseconds(50)), rule: "later") : .pass }))
        let body = UnreadBodyTests.bulk(seed: 7)
        // Properties longer than a frame: the head completes in the second frame.
        let note = String(repeating: "p", count: 20_000)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1", "note": note], body: body, compressed: true))

        var frames = 0
        var heldAfterHead: [Int] = []
        while try link.clientStep() {
            frames += 1
            if frames >= 2 { heldAfterHead.append(Self.held(link)) }
        }
        #expect(frames > 6)
        let waiting = heldAfterHead.dropLast()
        #expect(!waiting.isEmpty && waiting.allSatisfy { $0 == 0 }, "nothing copied while the decoder assembles it: \(waiting)")

        if delayed {
            // The rule delayed it: the assembled message waits, counted once against the budget.
            let whole = try #require(heldAfterHead.last)
            #expect(whole >= body.readableBytes + note.utf8.count && whole < body.readableBytes + note.utf8.count + 64)
            #expect(link.mediator.delayedBytes(.clientToServer) == whole)
            #expect(link.serverReceived.isEmpty)
            try link.fire(try #require(link.timers.first))
        }
        try link.pump()
        let received = try #require(link.serverReceived.first)
        #expect(received.properties["note"] == note && received.properties["seq"] == "1")
        #expect(received.body == body)
        #expect(received.isCompressed)
        #expect(Self.held(link) == 0 && link.mediator.delayedBytes(.clientToServer) == 0)
        #expect(link.mediator.lanes[0].messages.isEmpty, "forgotten once sent")
        // The session goes on: the next request follows it, renumbered by nothing.
        link.clientRequest(2, body: "after")
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2"])
        #expect(link.clientReceived.map(\.number) == [1, 2])
    }
}
