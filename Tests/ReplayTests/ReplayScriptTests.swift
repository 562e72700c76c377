import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import NIOCore
import Replay
import Testing

/// Scripts built from captured sessions: a synthetic one run through real endpoints and the
/// capture import path, and the go-blip reference capture.
@Suite struct ReplayScriptTests {
    /// A short pull as the wire carries it: getCheckpoint (404), subChanges, then the server's
    /// changes (answered), a rev (answered), and the client's setCheckpoint after all that.
    static func syntheticPull() throws -> CapturedConnection {
        let pair = EndpointPair()
        func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
        _ = pair.client.send(request: .request(profile: "getCheckpoint", properties: ["client": "cp-1"]))
        try pair.pump(onServerMessage: { request in
            pair.server.send(reply: .error(to: request.number, domain: "HTTP", code: 404, message: "missing"))
        })
        _ = pair.client.send(request: .request(profile: "subChanges", properties: ["batch": "200"]))
        try pair.pump(onServerMessage: { request in pair.server.send(reply: .reply(to: request)) })
        _ = pair.server.send(request: .request(profile: "changes", body: body("[[1,\"a\",\"1-aa\"]]")))
        try pair.pump(onClientMessage: { request in pair.client.send(reply: .reply(to: request, body: body("[[]]"))) })
        _ = pair.server.send(request: .request(profile: "rev", properties: ["id": "a", "rev": "1-aa"], body: body("{}")))
        try pair.pump(onClientMessage: { request in pair.client.send(reply: .reply(to: request)) })
        _ = pair.client.send(request: .request(profile: "setCheckpoint", properties: ["client": "cp-1"],
                                               body: body("{\"remote\":1}")))
        try pair.pump(onServerMessage: { request in
            pair.server.send(reply: .reply(to: request, properties: ["rev": "0-1"]))
        })
        var connection = CapturedConnection(
            index: 0, client: Endpoint(ip: .v4(0x7F00_0001), port: 50_000), server: Endpoint(ip: .v4(0x7F00_0001), port: 4984),
            kind: .webSocket, roleEvidence: .syn,
            request: HTTPRequestHead(method: "GET", target: "/db/_blipsync", version: "HTTP/1.1",
                                     headers: HTTPHeaderFields(["Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2",
                                                                "Authorization": "Basic <redacted>"])),
            response: HTTPResponseHead(version: "HTTP/1.1", status: 101, reason: "Switching Protocols",
                                       headers: HTTPHeaderFields(["Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3"])))
        connection.events = pair.wire.enumerated().map { offset, frame in
            CapturedEvent(time: CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: UInt32(offset) * 1_000_000),
                          direction: frame.direction == .clientToServer ? .clientToServer : .serverToClient,
                          kind: .message(opcode: 2, payload: frame.bytes), packetIndex: offset)
        }
        return connection
    }

    @Test func clientScriptWaitsForWhatArrivedBeforeEachRequest() throws {
        let session = CapturedSession(decoding: try Self.syntheticPull())
        #expect(session.problems.isEmpty)
        #expect(session.handshake.offeredSubprotocols == ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"])
        #expect(session.handshake.subprotocol == "BLIP_3+CBMobile_3")
        #expect(session.handshake.sentCredentials)
        let script = session.script(for: .client)
        #expect(script.requests.map(\.profile) == ["getCheckpoint", "subChanges", "setCheckpoint"])
        #expect(script.requests.map { $0.recordedReply?.type } == [.error, .response, .response])
        #expect(script.requests[0].awaitsReplies == [] && script.requests[0].awaitsPeerRequests == 0)
        // subChanges went out after getCheckpoint's ERR came back.
        #expect(script.requests[1].awaitsReplies == [0] && script.requests[1].awaitsPeerRequests == 0)
        // setCheckpoint: after subChanges' reply and after the server's changes and rev.
        #expect(script.requests[2].awaitsReplies == [1] && script.requests[2].awaitsPeerRequests == 2)
        #expect(script.requests[2].recordedReply?.properties["rev"] == "0-1")
        #expect(script.peerRequests.map(\.profile) == ["changes", "rev"])
        #expect(script.peerRequests[0].recordedReply.map { String(buffer: $0.body) } == "[[]]")
        #expect(script.expectedReplies == 3)
        #expect(script.unpairedReplies == 0)
    }

    @Test func serverScriptIsTheSameSessionSeenFromTheOtherSide() throws {
        let script = CapturedSession(decoding: try Self.syntheticPull()).script(for: .server)
        #expect(script.requests.map(\.profile) == ["changes", "rev"])
        // The server sent changes once the client's subChanges had arrived (its getCheckpoint
        // causes nothing), rev after the changes reply.
        #expect(script.requests[0].awaitsPeerRequests == 1)
        #expect(script.requests[1].awaitsReplies == [0])
        #expect(script.peerRequests.map(\.profile) == ["getCheckpoint", "subChanges", "setCheckpoint"])
        #expect(script.peerRequests[0].recordedReply?.properties["Error-Code"] == "404")
    }

    /// The counts the vectors README gives for the go-blip capture: client → server 17 MSG,
    /// server → client 14 RPY + 1 ERR (two client requests are NoReply), 8 MSG and 8 RPY back.
    @Test func goBlipCaptureGivesBothScripts() throws {
        let path = try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
        let session = try CapturedSession.load(path: path, session: nil)
        #expect(session.id == 0)
        #expect(session.problems.isEmpty)
        #expect(session.handshake.subprotocol == "BLIP_3+CBMobile_3")
        let client = session.script(for: .client)
        #expect(client.requests.count == 17)
        #expect(client.expectedReplies == 15)
        #expect(client.requests.filter { $0.recordedReply?.type == .error }.map(\.profile) == ["fail"])
        #expect(client.requests.filter(\.request.isNoReply).count == 2)
        #expect(client.peerRequests.count == 8)
        #expect(client.peerRequests.allSatisfy { $0.recordedReply?.type == .response })
        let server = session.script(for: .server)
        #expect(server.requests.count == 8)
        #expect(server.peerRequests.count == 17)
        #expect(throws: ReplayError.self) { try CapturedSession.load(path: path, session: 3) }
    }
}
