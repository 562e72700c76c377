import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// What the mediator remembers of messages it forwarded untouched, told as the story of a session
/// whose first intervention comes while earlier requests still wait for their replies (§4.4).
@Suite("Mediator pass-through")
struct PassThroughTests {
    /// Records the head of every reply the policy sees; denies client requests by `seq`.
    private static func policy(denying seqs: Set<String>, replyHeads: Box<[MediatedHead]>) -> ScriptedPolicy {
        ScriptedPolicy(onHead: { head in
            if head.type.isReply { replyHeads.value.append(head) }
            guard head.direction == .clientToServer, head.type == .request,
                  let seq = head.properties["seq"], seqs.contains(seq) else { return .pass }
            return .deny(ErrorReply(code: 403, message: "denied by test"), rule: "test-deny")
        })
    }

    @Test("replies to requests forwarded before the first intervention are mapped back with their request's profile")
    func inFlightRepliesAfterFirstIntervention() throws {
        let heads = Box<[MediatedHead]>([])
        let link = MediatedLink(policy: Self.policy(denying: ["4"], replyHeads: heads))
        link.answerServerRequests = false
        for seq in 1...3 { link.clientRequest(seq, profile: "early-\(seq)") }
        try link.pump()
        #expect(link.serverReceived.map(\.number) == [1, 2, 3])
        #expect(link.outputs.allSatisfy { $0.output.isPassThrough })

        // The first intervention: both directions re-encode from here on.
        link.clientRequest(4, profile: "denied")
        link.clientRequest(5, profile: "late")
        try link.pump()
        #expect(link.mediator.isReencoding(.clientToServer) && link.mediator.isReencoding(.serverToClient))
        #expect(link.serverReceived.map(\.number) == [1, 2, 3, 4])
        #expect(link.serverReceived.last?.properties["seq"] == "5")

        // The upstream answers everything now, newest first; #4 upstream is the client's #5.
        for request in link.serverReceived.reversed() {
            link.server.send(reply: BLIPMessage.reply(to: request, properties: ["seq": request.properties["seq"] ?? ""]))
        }
        try link.pump()
        let replies = link.clientReceived.filter { $0.type == .response }
        #expect(replies.map(\.number).sorted() == [1, 2, 3, 5])
        #expect(replies.allSatisfy { $0.properties["seq"] == String($0.number) })
        #expect(link.clientReceived.contains { $0.type == .error && $0.number == 4 })
        let profiles = Dictionary(uniqueKeysWithValues: heads.value.map { ($0.number, $0.requestProfile) })
        #expect(profiles == [1: "early-1", 2: "early-2", 3: "early-3", 5: "late"])
    }

    @Test("a reply the policy holds after a run of pass-through messages is still delivered in the requester's numbering")
    func heldReplyAfterPassThrough() throws {
        let link = MediatedLink(policy: ScriptedPolicy(onHead: { head in
            head.type.isReply && head.number == 3 ? .delay(.milliseconds(10), rule: "slow-reply") : .pass
        }))
        for seq in 1...4 { link.clientRequest(seq, profile: "p\(seq)") }
        try link.pump()
        #expect(link.clientReceived.map(\.number) == [1, 2, 4])
        #expect(link.mediator.isReencoding(.serverToClient) && !link.mediator.isReencoding(.clientToServer))
        let timer = try #require(link.timers.first)
        try link.fire(timer)
        #expect(link.clientReceived.map(\.number) == [1, 2, 4, 3])
        #expect(link.clientReceived.last?.properties["seq"] == "3")
        #expect(link.reports.map(\.profile) == ["p3"])
    }

    @Test("an output that only forwards the received frame lists exactly one original send")
    func passThroughOutputShape() throws {
        let link = MediatedLink(policy: ScriptedPolicy())
        link.clientRequest(1, body: String(repeating: "x", count: 300))
        try link.pump()
        #expect(link.outputs.count == 2)
        for (_, output) in link.outputs {
            #expect(output.sendCount == 1 && output.sends.count == 1 && output.isPassThrough)
            var visited = 0
            output.forEachSend { _ in visited += 1 }
            #expect(visited == 1)
        }
    }
}

/// A mutable box the policy closures can write into.
final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}
