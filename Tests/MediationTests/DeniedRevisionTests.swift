import BLIPCore
import BLIPTestSupport
import Mediation
import NIOCore
import Testing

/// A `rev` the relay refuses is answered on both sides: its sender gets the ERR, and the peer
/// that asked for the revision gets a `norev` in its place, so a pull completes and a passive
/// peer's count of requested revisions goes down (replication-protocol §3 "norev").
@Suite("Denied revisions")
struct DeniedRevisionTests {
    static let revID = "1-" + String(repeating: "a", count: 40)

    /// Denies the `rev` requests for document `docID` travelling `direction`, at the head or, with
    /// `atBody`, once the whole message is in.
    static func denyingRevs(of docID: String, travelling direction: BLIPDirection, atBody: Bool = false) -> ScriptedPolicy {
        let matches: (MediatedHead) -> Bool = { head in
            head.direction == direction && head.type == .request && head.properties.profile == "rev"
                && head.properties["id"] == docID
        }
        return ScriptedPolicy(
            onHead: { head in matches(head) ? (atBody ? .awaitBody(rule: "big-docs") : .deny(ErrorReply(message: "no"), rule: "no-secret")) : .pass },
            onBody: { _, head in matches(head) ? BodyDecision(.deny(ErrorReply(code: 413, message: "too big")), rule: "big-docs") : .pass })
    }

    static func rev(_ docID: String, sequence: Int, body: ByteBuffer = ByteBuffer(string: "{}"), noReply: Bool = false) -> BLIPMessage {
        .request(profile: "rev", properties: ["id": docID, "rev": revID, "sequence": String(sequence), "collection": "0"],
                 body: body, compressed: true, noReply: noReply)
    }

    @Test("push: the client's denied rev gets ERR 403, the server gets norev with id, rev, sequence and the status")
    func pushedRevDenied() throws {
        let link = MediatedLink(policy: Self.denyingRevs(of: "secret", travelling: .clientToServer))
        for (seq, id) in [(1, "a"), (2, "secret"), (3, "b")] { link.client.send(request: Self.rev(id, sequence: seq)) }
        try link.pump()

        #expect(link.serverReceived.map(\.number) == [1, 2, 3])
        #expect(link.serverReceived.map(\.properties.profile) == ["rev", "norev", "rev"])
        let notice = link.serverReceived[1]
        #expect(notice.isNoReply)
        #expect(notice.properties["id"] == "secret" && notice.properties["rev"] == Self.revID)
        #expect(notice.properties["sequence"] == "2" && notice.properties["collection"] == "0")
        #expect(notice.properties["error"] == "403" && notice.properties["reason"] == "no")
        #expect(link.clientReceived.map(\.type) == [.response, .error, .response])
        #expect(link.clientReceived.map(\.number) == [1, 2, 3])
        #expect(link.reports.map(\.action) == ["deny 403 + norev"])
    }

    @Test("pull: the server's denied rev never reaches the client, which gets norev for it instead")
    func pulledRevDenied() throws {
        let link = MediatedLink(policy: Self.denyingRevs(of: "doc-2", travelling: .serverToClient))
        for seq in 1...3 { link.server.send(request: Self.rev("doc-\(seq)", sequence: seq)) }
        try link.pump()

        #expect(link.clientReceived.map(\.properties.profile) == ["rev", "norev", "rev"])
        #expect(link.clientReceived[1].properties["id"] == "doc-2" && link.clientReceived[1].properties["sequence"] == "2")
        #expect(link.clientReceived.map(\.number) == [1, 2, 3])
    }

    @Test("a rev spanning many frames, denied at its first: norev at once, the ERR after its last frame")
    func multiFrameRevDenied() throws {
        let link = MediatedLink(policy: Self.denyingRevs(of: "big", travelling: .clientToServer))
        var random = SeededRandom(seed: 11)
        var body = ByteBuffer(string: "{\"blob\":\"")
        for _ in 0..<(300 * 1024) { body.writeInteger(UInt8.random(in: 97...122, using: &random)) }
        body.writeString("\"}")
        link.client.send(request: Self.rev("big", sequence: 1, body: body))
        link.client.send(request: Self.rev("small", sequence: 2))
        try link.pump()

        #expect(link.framesSentByClient > 2)
        #expect(link.serverReceived.map(\.properties.profile) == ["norev", "rev"])
        #expect(link.serverReceived.map(\.number) == [1, 2])
        // The client interleaves the small rev's frame with the big one's (§4.3): its reply may come first.
        let answers = link.clientReceived.sorted { $0.number < $1.number }
        #expect(answers.map(\.type) == [.error, .response])
        #expect(answers.map(\.number) == [1, 2])
    }

    @Test("a rev denied by a body rule gets norev too, with that rule's status")
    func revDeniedAtBody() throws {
        let link = MediatedLink(policy: Self.denyingRevs(of: "doc-1", travelling: .clientToServer, atBody: true))
        link.client.send(request: Self.rev("doc-1", sequence: 1))
        link.client.send(request: Self.rev("doc-2", sequence: 2))
        try link.pump()
        #expect(link.serverReceived.map(\.properties.profile) == ["norev", "rev"])
        #expect(link.serverReceived.first?.properties["error"] == "413")
        #expect(link.clientReceived.first?.properties["Error-Code"] == "413")
    }

    @Test("a dropped rev's receiver gets norev 503 too; a denied request of another profile gets none")
    func droppedRevGetsANotice() throws {
        let link = MediatedLink(policy: ScriptedPolicy(onHead: { head in
            guard head.direction == .clientToServer, head.type == .request else { return .pass }
            switch head.properties["id"] {
            case "lost": return .drop(rule: "loss")
            case "other": return .deny(rule: "deny-other")
            default: return .pass
            }
        }))
        link.client.send(request: Self.rev("lost", sequence: 1))
        link.client.send(request: .request(profile: "getAttachment", properties: ["id": "other", "digest": "sha1-x"]))
        link.client.send(request: Self.rev("kept", sequence: 3))
        try link.pump()
        #expect(link.serverReceived.map(\.properties.profile) == ["norev", "rev"])
        #expect(link.serverReceived.map(\.properties["id"]) == ["lost", "kept"])
        #expect(link.serverReceived.first?.properties["error"] == "503")
        // The drop answers its sender nothing; the denied getAttachment gets its ERR; the kept rev its reply.
        #expect(link.clientReceived.map(\.type) == [.error, .response])
        #expect(link.reports.map(\.action) == ["drop (no ERR) + norev", "deny 403"])
    }

    @Test("pull from Sync Gateway: a denied NoReply rev becomes a norev for the client, and SG, which expects no answer, gets none")
    func noReplyRevDenied() throws {
        let link = MediatedLink(policy: Self.denyingRevs(of: "doc-2", travelling: .serverToClient))
        for seq in 1...3 { link.server.send(request: Self.rev("doc-\(seq)", sequence: seq, noReply: true)) }
        try link.pump()

        #expect(link.clientReceived.map(\.properties.profile) == ["rev", "norev", "rev"])
        #expect(link.clientReceived.map(\.number) == [1, 2, 3])
        let notice = link.clientReceived[1]
        #expect(notice.properties["id"] == "doc-2" && notice.properties["sequence"] == "2" && notice.properties["error"] == "403")
        #expect(link.serverReceived.isEmpty)
        #expect(link.reports.map(\.action) == ["deny 403 (no ERR) + norev"])
        // Observers are told which request never reached its receiver: only doc-2's.
        let withheld = link.outputs.compactMap { $0.output.completedWithheld ? $0.output.decoded?.message?.properties["id"] : nil }
        #expect(withheld == ["doc-2"])
    }
}
