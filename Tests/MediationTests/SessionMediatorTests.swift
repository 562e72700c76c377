import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// Sessions through the mediator told as protocol stories: real endpoints on both sides check
/// every number, checksum and deflated byte the relay sends (wire-format §2.4, §3, §4.4, §5, §6).
@Suite("Session mediator")
struct SessionMediatorTests {
    @Test("frames leave as the original bytes until the first intervention, then re-encoded")
    func passThroughUntilFirstIntervention() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [4]))
        for seq in 1...3 { link.clientRequest(seq, body: "hello \(seq)", compressed: true) }
        try link.pump()
        #expect(link.outputs.count == 6)
        #expect(link.outputs.allSatisfy { $0.output.isPassThrough })
        #expect(!link.mediator.isReencoding(.clientToServer) && !link.mediator.isReencoding(.serverToClient))

        for seq in 4...5 { link.clientRequest(seq, body: "hello \(seq)", compressed: true) }
        try link.pump()
        #expect(link.mediator.isReencoding(.clientToServer) && link.mediator.isReencoding(.serverToClient))
        let later = link.outputs.dropFirst(6)
        #expect(later.allSatisfy { !$0.output.isPassThrough })
        #expect(link.reports.map(\.action) == ["deny 403"])
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3", "5"])
    }

    @Test("deny client MSG #5: client gets ERR #5, upstream sees #6 as #5, its RPY #5 returns as RPY #6")
    func denyRenumbers() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [5]))
        for seq in 1...7 { link.clientRequest(seq) }
        try link.pump()

        #expect(link.serverReceived.map(\.number) == [1, 2, 3, 4, 5, 6])
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3", "4", "6", "7"])
        let error = try #require(link.clientReceived.first { $0.type == .error })
        #expect(error.number == 5)
        #expect(error.properties["Error-Domain"] == "HTTP" && error.properties["Error-Code"] == "403")
        #expect(String(buffer: error.body) == "denied by test")
        let replies = link.clientReceived.filter { $0.type == .response }
        #expect(replies.map(\.number) == [1, 2, 3, 4, 6, 7])
        // Each reply reached the request it answers: the server echoes the request's seq.
        #expect(replies.allSatisfy { $0.properties["seq"] == String($0.number) })
        #expect(link.reports.first?.number == 5 && link.reports.first?.rule == "test-deny")
        #expect(link.reports.first?.profile == "test")
    }

    @Test("after a denied compressed request, later compressed requests still inflate and verify upstream")
    func deniedCompressedRequest() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [2]))
        let text = "{\"docs\":[" + (0..<40).map { "{\"_id\":\"doc-\($0)\",\"channels\":[\"public\"]}" }.joined(separator: ",") + "]}"
        for seq in 1...6 { link.clientRequest(seq, body: text + " #\(seq)", compressed: true) }
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "3", "4", "5", "6"])
        #expect(link.serverReceived.allSatisfy { String(buffer: $0.body).hasPrefix(text) && $0.isCompressed })
        #expect(link.clientReceived.filter { $0.type == .response }.count == 5)
        #expect(link.clientReceived.contains { $0.type == .error && $0.number == 2 })
    }

    @Test("a denied 1 MiB request is ACKed by the relay, so the client sends it all and gets its ERR")
    func deniedLargeMessageIsAcked() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [1]))
        var random = SeededRandom(seed: 7)
        var body = ByteBuffer()
        for _ in 0..<(1 << 20) { body.writeInteger(UInt8.random(in: 0...255, using: &random)) }
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"], body: body))
        link.clientRequest(2)
        try link.pump()
        // 1 MiB in ≤16 KiB frames is ~65 frames; without ACKs the client pauses after ~8 (128,000 bytes, §5).
        #expect(link.framesSentByClient > 64)
        #expect(link.acksReceivedByClient >= 15)  // one per ≥50,000 bytes: every 4th 16 KiB frame
        #expect(link.clientReceived.contains { $0.type == .error && $0.number == 1 })
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["2"])
        #expect(link.serverReceived.first?.number == 1)
        #expect(link.acksReceivedByServer == 0)
    }

    @Test("a denied NoReply request vanishes: no ERR, and the next request closes the gap")
    func deniedNoReplyVanishes() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [1]))
        link.clientRequest(1, noReply: true)
        link.clientRequest(2)
        try link.pump()
        #expect(link.clientReceived.allSatisfy { $0.type != .error })
        #expect(link.serverReceived.map(\.number) == [1])
        #expect(link.serverReceived.first?.properties["seq"] == "2")
        #expect(link.clientReceived.map(\.number) == [2])
    }

    @Test("a multi-frame denied request gets its ERR only after its last frame arrived")
    func errAfterLastFrame() throws {
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [1]))
        link.clientRequest(1, body: String(repeating: "x", count: 40_000))
        var errorBeforeLast = false
        var steps = 0
        while try link.clientStep() {
            steps += 1
            if link.client.outbound.hasFrames, link.clientReceived.contains(where: { $0.type == .error }) {
                errorBeforeLast = true
            }
        }
        #expect(steps == 3)
        #expect(!errorBeforeLast)
        #expect(link.clientReceived.map(\.type) == [.error])
        #expect(link.outputs.prefix(2).allSatisfy { $0.output.sends.isEmpty })
    }

    @Test("a delayed request holds later requests, while replies and ACKs keep flowing")
    func delayHoldsRequestsNotReplies() throws {
        let policy = ScriptedPolicy(onHead: { head in
            head.direction == .clientToServer && head.type == .request && head.properties["seq"] == "1"
                ? .delay(.seconds(1), rule: "slow") : .pass
        })
        let link = MediatedLink(policy: policy)
        // The server asks something first; the client will answer it while its own requests wait.
        link.server.send(request: .request(profile: "getCheckpoint", properties: ["client": "x"]))
        try link.serverStep()
        let question = try #require(link.clientReceived.first)
        link.clientRequest(1)
        link.clientRequest(2)
        link.client.send(reply: BLIPMessage.reply(to: question, body: ByteBuffer(string: "{\"rev\":\"1-a\"}")))
        try link.pump()
        #expect(link.serverReceived.map(\.type) == [.response])
        #expect(link.timers.count == 1 && link.timers[0].delay == .seconds(1))
        #expect(link.reports.map(\.action) == ["delay 1s"])

        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.serverReceived.filter { $0.type == .request }.map { $0.properties["seq"] } == ["1", "2"])
        #expect(link.clientReceived.filter { $0.type == .response }.map(\.number) == [1, 2])
    }

    @Test("a delayed large request is ACKed by the relay while it is held")
    func delayedLargeRequestIsAcked() throws {
        let policy = ScriptedPolicy(onHead: { $0.direction == .clientToServer ? .delay(.milliseconds(50)) : .pass })
        let link = MediatedLink(policy: policy)
        var random = SeededRandom(seed: 11)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"],
                                           body: ByteBuffer(bytes: random.bytes(480_000)), compressed: true))
        try link.pump()
        #expect(link.serverReceived.isEmpty)
        #expect(link.acksReceivedByClient > 0)
        #expect(!link.client.outbound.hasFrames)
        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.serverReceived.count == 1)
        #expect(link.serverReceived.first?.body.readableBytes == 480_000)
        #expect(link.clientReceived.map(\.number) == [1])
    }

    @Test("the upstream's request can be denied too; the ERR copies the request's Urgent bit")
    func denyUpstreamUrgentRequest() throws {
        let policy = ScriptedPolicy(onHead: { head in
            head.direction == .serverToClient && head.type == .request && head.properties["seq"] == "1"
                ? .deny(ErrorReply(domain: "BLIP", code: 404, message: "no handler"), rule: "hide") : .pass
        })
        let link = MediatedLink(policy: policy)
        link.server.send(request: .request(profile: "getAttachment", properties: ["seq": "1"], urgent: true))
        link.server.send(request: .request(profile: "getAttachment", properties: ["seq": "2"], urgent: true))
        try link.pump()
        #expect(link.clientReceived.map { $0.properties["seq"] } == ["2"])
        #expect(link.clientReceived.first?.number == 1)
        let error = try #require(link.serverReceived.first { $0.type == .error })
        #expect(error.number == 1 && error.isUrgent)
        #expect(error.properties["Error-Domain"] == "BLIP" && error.properties["Error-Code"] == "404")
        // The client answers its #1 (the server's #2); the answer reaches the server as RPY #2.
        link.client.send(reply: .reply(to: link.clientReceived[0], body: ByteBuffer(string: "blob")))
        try link.pump()
        let reply = try #require(link.serverReceived.first { $0.type == .response })
        #expect(reply.number == 2 && String(buffer: reply.body) == "blob" && reply.isUrgent)
    }

    @Test("withheld ACKs pause the sender at 128,000 unacknowledged bytes until the hold ends, without re-encoding")
    func withheldAcksPauseTheSender() throws {
        let link = MediatedLink(policy: ServerAckHoldingPolicy())
        var random = SeededRandom(seed: 3)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"], body: ByteBuffer(bytes: random.bytes(400_000))))
        try link.pump()
        // Paused: 128,000 bytes is 8 frames of 16 KiB; the server ACKed, the relay holds the ACK.
        #expect(link.framesSentByClient == 8)
        #expect(link.serverReceived.isEmpty && link.acksReceivedByClient == 0)
        #expect(link.timers.count == 2 && link.reports.map(\.action) == ["hold-ack 2s", "hold-ack 2s"])  // ACKs at 65,536 and 131,072 bytes
        #expect(!link.mediator.isReencoding(.clientToServer) && !link.mediator.isReencoding(.serverToClient))
        var fired = 0
        while fired < link.timers.count {
            try link.fire(link.timers[fired])
            fired += 1
            try link.pump()
        }
        #expect(link.serverReceived.count == 1 && link.serverReceived[0].body.readableBytes == 400_000)
        #expect(link.clientReceived.map(\.number) == [1])
        #expect(link.outputs.allSatisfy { $0.output.sends.allSatisfy { if case .original = $0.payload { true } else { false } } })
    }
}
