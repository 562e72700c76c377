import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// A mediating session need not hold the body of a message it takes frame by frame: the mediator
/// says which messages those are (``MediatorOutput/unreadBody``), and a shell whose observers read
/// no bodies tells it to keep only their preview. Whatever the message's fate (forwarded as it
/// came, re-encoded, delayed, refused), what its receiver gets is unchanged; only a message
/// decided on or rewritten by its body is still kept whole.
@Suite struct UnreadBodyTests {
    static let size = 100_000
    static let preview = 64

    static func bulk(seed: UInt64) -> ByteBuffer { compressibleText(size, seed: seed) }

    /// The messages the mediator gave observers, travelling `direction`.
    static func observed(_ link: MediatedLink, _ direction: BLIPDirection) -> [BLIPMessage] {
        link.outputs.filter { $0.direction == direction }.compactMap { $0.output.decoded?.message }
    }

    static func unread(_ link: MediatedLink) -> [UnreadBody] { link.outputs.compactMap(\.output.unreadBody) }

    @Test("a passed request of many frames is reported at its head; not kept, it is still forwarded byte for byte",
          arguments: [false, true])
    func passedRequestIsForwardedWhole(compressed: Bool) throws {
        let link = MediatedLink(policy: ScriptedPolicy())
        link.unreadBodyPreview = Self.preview
        let body = Self.bulk(seed: 1)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: compressed))
        try link.pump()

        #expect(Self.unread(link) == [UnreadBody(direction: .clientToServer, type: .request, number: 1)])
        #expect(link.serverReceived.map(\.body) == [body], "the receiver checks every CRC and inflates every frame")
        let seen = try #require(Self.observed(link, .clientToServer).first)
        #expect(seen.body == body.getSlice(at: 0, length: Self.preview))
        #expect(seen.bodyLength == Self.size && seen.unkeptBodyBytes == Self.size - Self.preview)
        #expect(link.peakBytesInProgress < 20_000, "one frame's worth, never the whole body")
        #expect(link.mediator.bytesInProgress == 0)
    }

    @Test("in a direction the relay re-encodes, a body not kept is re-framed from each frame as it arrives")
    func reencodedDirectionStillSendsEveryFrame() throws {
        // Denying request 1 renumbers the client's direction from then on.
        let link = MediatedLink(policy: ScriptedPolicy.denying(client: [1]))
        link.unreadBodyPreview = 0
        link.clientRequest(1, profile: "denied", body: "x", compressed: true)
        try link.pump()
        #expect(link.mediator.isReencoding(.clientToServer))

        let body = Self.bulk(seed: 2)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "2"], body: body, compressed: true))
        try link.pump()
        #expect(Self.unread(link) == [UnreadBody(direction: .clientToServer, type: .request, number: 2)],
                "reported as the sender numbered it: the decoder's number")
        let received = try #require(link.serverReceived.first)
        #expect(received.number == 1, "renumbered past the denied request")
        #expect(received.body == body)
        #expect(Self.observed(link, .clientToServer).last?.bodyLength == Self.size)
        #expect(link.peakBytesInProgress < 20_000)
    }

    @Test("a delayed message holds its own frames for the timer; the decoder's copy of its body is not needed")
    func delayedMessageIsReleasedWhole() throws {
        let link = MediatedLink(policy: ScriptedPolicy(onHead: { head in
            head.type == .request && head.profile == "bulk" ? .delay(.milliseconds(100), rule: "slow") : .pass
        }))
        link.unreadBodyPreview = 0
        let body = Self.bulk(seed: 3)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(Self.unread(link).count == 1)
        #expect(link.serverReceived.isEmpty && link.timers.count == 1)
        #expect(link.mediator.bytesInProgress == 0)
        try link.fire(link.timers[0])
        try link.pump()
        #expect(link.serverReceived.map(\.body) == [body])
    }

    @Test("a reply the relay passes is reported in its sender's numbering and reaches its requester whole")
    func passedReplyIsReported() throws {
        let link = MediatedLink(policy: ScriptedPolicy())
        link.unreadBodyPreview = 10
        link.answerServerRequests = false
        link.clientRequest(1, profile: "getAttachment")
        try link.pump()
        let request = try #require(link.serverReceived.first)
        let body = Self.bulk(seed: 4)
        link.server.send(reply: .reply(to: request, body: body, compressed: true))
        try link.pump()
        #expect(Self.unread(link) == [UnreadBody(direction: .serverToClient, type: .response, number: 1)])
        #expect(link.clientReceived.map(\.body) == [body])
        let seen = try #require(Self.observed(link, .serverToClient).last)
        #expect(seen.body == body.getSlice(at: 0, length: 10) && seen.bodyLength == Self.size)
    }

    @Test("a message the policy decides on by its body is not reported: it is kept whole for the decision")
    func bodyRuleKeepsTheBody() throws {
        let decided = BodyBox()
        let link = MediatedLink(policy: ScriptedPolicy(
            onHead: { $0.type == .request && $0.profile == "rev" ? .awaitBody(rule: "look") : .pass },
            onBody: { message, _ in decided.body = message.body; return .pass }))
        link.unreadBodyPreview = 0
        let body = Self.bulk(seed: 5)
        link.client.send(request: .request(profile: "rev", properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(Self.unread(link).isEmpty)
        #expect(decided.body == body, "the body rule saw all of it")
        #expect(link.serverReceived.map(\.body) == [body])
        #expect(Self.observed(link, .clientToServer).first?.body == body)
    }

    @Test("the reply to a filtered changes list is not reported: the relay rewrites it whole")
    func rewrittenReplyKeepsTheBody() throws {
        let link = MediatedLink(policy: ChangesFilterTests.filteringPolicy(hiding: ["b", "d"]))
        link.unreadBodyPreview = 0
        link.answerServerRequests = false
        link.clientRequest(1, profile: "changes", body: ChangesFilterTests.changes, compressed: true)
        try link.pump()
        let received = try #require(link.serverReceived.first)
        // Two entries kept, each answered with a long list of known ancestors: a reply of many frames.
        let ancestors = "[" + (1...2_500).map { "\"\($0)-\(String(repeating: "a", count: 16))\"" }.joined(separator: ",") + "]"
        link.server.send(reply: .reply(to: received, body: ByteBuffer(string: "[\(ancestors),\(ancestors)]"), compressed: true))
        try link.pump()
        #expect(Self.unread(link).isEmpty)
        let reply = try #require(link.clientReceived.first)
        #expect(String(buffer: reply.body) == "[\(ancestors),0,\(ancestors)]")
    }

    @Test("without a shell that says so, the mediator keeps bodies whole as before")
    func withoutTheCallBodiesAreKept() throws {
        let link = MediatedLink(policy: ScriptedPolicy())
        let body = Self.bulk(seed: 6)
        link.client.send(request: .request(profile: "bulk", properties: ["seq": "1"], body: body, compressed: true))
        try link.pump()
        #expect(Self.unread(link).count == 1)
        #expect(Self.observed(link, .clientToServer).first?.body == body)
        #expect(link.peakBytesInProgress > Self.size - 20_000)
    }
}

/// What a body rule saw.
private final class BodyBox: @unchecked Sendable {
    var body: ByteBuffer?
}
