import BLIPCore
import BLIPNIO
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import Relay

/// The upgrade request crosses the relay as the client wrote it. LiteCore's own HTTP server (a
/// Couchbase Lite peer-to-peer listener) answers 405 unless it reads `Connection: Upgrade` with
/// a capital U, so a relay that respells header tokens cannot front it.
@Suite struct RelayUpgradeRequestTests {
    /// An upstream that upgrades only `Connection: Upgrade` spelled exactly so, as LiteCore does.
    static func liteCoreLikeUpstream(_ configuration: inout BLIPWebSocketServer.Configuration) {
        configuration.decide = { head in
            guard head.headers.first(name: "Connection") == "Upgrade" else {
                return .refuse(status: .methodNotAllowed, headers: [:], body: "Method not allowed")
            }
            return .syncGatewayChoice(offered: BLIPHandshakeDecision.offeredProtocols(head.headers),
                                      supported: ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_2"])
        }
    }

    @Test func theForwardedRequestKeepsTheClientsNamesOrderAndSpellingChangingOnlyWhatTheRelayOwns() throws {
        var client = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/db/_blipsync?client=x")
        client.headers.add(name: "Host", value: "relay.example:4994")
        client.headers.add(name: "Connection", value: "keep-alive, Upgrade")
        client.headers.add(name: "Keep-Alive", value: "timeout=5")
        client.headers.add(name: "Upgrade", value: "websocket")
        client.headers.add(name: "Sec-WebSocket-Version", value: "13")
        client.headers.add(name: "Sec-WebSocket-Key", value: "dGhlIHNhbXBsZSBub25jZQ==")
        client.headers.add(name: "Sec-WebSocket-Protocol", value: "BLIP_3+CBMobile_3,BLIP_3+CBMobile_2")
        client.headers.add(name: "Sec-WebSocket-Extensions", value: "permessage-deflate")
        client.headers.add(name: "authorization", value: "Basic YWxpY2U6c2VjcmV0")
        client.headers.add(name: "X-Forwarded-For", value: "10.1.1.1")
        client.headers.add(name: "User-Agent", value: "CouchbaseLite/3.1.0")
        let request = try #require(HandshakeHeaders.upstreamRequest(
            from: client, uri: "/db/_blipsync?client=x", upstreamHost: "127.0.0.1:4984",
            clientIP: "127.0.0.1", clientTLS: true))
        #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(request.head.headers.map { "\($0.name): \($0.value)" } == [
            "Host: 127.0.0.1:4984",
            "Connection: Upgrade",
            "Upgrade: websocket",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3,BLIP_3+CBMobile_2",
            "authorization: Basic YWxpY2U6c2VjcmV0",
            "User-Agent: CouchbaseLite/3.1.0",
            "X-Forwarded-For: 10.1.1.1, 127.0.0.1",
            "X-Forwarded-Proto: https",
        ])
    }

    @Test func ownRequestsSpellTheUpgradeTheWayLiteCoreDoes() {
        let request = WebSocketUpgradeRequest(uri: "/db/_blipsync", host: "h:1", subprotocols: ["BLIP_3+CBMobile_3"],
                                              headers: ["Authorization": "Basic eDp5"], key: "a2V5a2V5a2V5a2V5a2V5a2V5")
        #expect(request.head.headers.map { "\($0.name): \($0.value)" } == [
            "Host: h:1", "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: a2V5a2V5a2V5a2V5a2V5a2V5", "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3",
            "Authorization: Basic eDp5",
        ])
    }

    @Test func aRawRequestReachesTheUpstreamHeaderForHeaderAndTheClientGetsAProperlySpelled101() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let tap = try await TCPTap.start(group: group)
        let harness = try await RelayHarness.start(upstream: Self.liteCoreLikeUpstream,
                                                   relay: { tap.interpose(upstreamOf: &$0) })
        let relayPort = harness.relayAddress.port!
        let lines = [
            "GET /db/_blipsync HTTP/1.1", "Host: 127.0.0.1:\(relayPort)", "Connection: Upgrade", "Upgrade: websocket",
            "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Protocol: BLIP_3+CBMobile_3,BLIP_3+CBMobile_2", "cookie: SyncGatewaySession=abc",
        ]
        let client = try await RawUpgradeClient.send(lines.joined(separator: "\r\n") + "\r\n\r\n",
                                                     port: relayPort, group: group)
        let answer = try await client.responseHead()
        #expect(answer.first == "HTTP/1.1 101 Switching Protocols")
        #expect(answer.contains("Connection: Upgrade"))
        #expect(answer.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        #expect(answer.contains("Sec-WebSocket-Protocol: BLIP_3+CBMobile_3"))
        let forwarded = RawUpgradeClient.headLines(of: tap.forward.withLockedValue { $0 })
        #expect(forwarded == ["GET /db/_blipsync HTTP/1.1", "Host: 127.0.0.1:\(tap.port)"] + lines.dropFirst(2)
            + ["X-Forwarded-For: 127.0.0.1", "X-Forwarded-Proto: http"])
        try await client.channel.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
        try await group.shutdownGracefully()
    }

    @Test(arguments: [
        ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n",
         "HTTP/1.1 426 Upgrade Required", "Sec-WebSocket-Version: 13"),
        ("Accept: */*\r\n", "HTTP/1.1 400 Bad Request", "Content-Type: text/plain; charset=utf-8"),
    ])
    func refusalsNameWhatIsWrong(headers: String, status: String, header: String) async throws {
        let harness = try await RelayHarness.start()
        let port = harness.relayAddress.port!
        let client = try await RawUpgradeClient.send(
            "GET /db/_blipsync HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)Sec-WebSocket-Protocol: BLIP_3+CBMobile_3\r\n\r\n",
            port: port, group: harness.group)
        let answer = try await client.responseHead()
        #expect(answer.first == status)
        #expect(answer.contains(header))
        let refused = try await harness.recorder.first { if case .handshakeRefused = $0 { true } else { false } }
        if case .handshakeRefused(let refusal) = refused {
            #expect(!refusal.reason.contains("Sec-WebSocket-Protocol"), "the reason names the real problem: \(refusal.reason)")
        }
        try await withTimeout { try await client.channel.closeFuture.get() }  // the relay closes after refusing
        try await harness.shutdown()
    }

    @Test func aMalformedRequestGets400AndTheRefusalIsLogged() async throws {
        // The harness's client-header timeout is long enough not to beat the parse (it answers 408).
        let harness = try await RelayHarness.start()
        let client = try await RawUpgradeClient.send("GET /db/_blipsync HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
                                                     port: harness.relayAddress.port!, group: harness.group)
        #expect(try await client.responseHead().first == "HTTP/1.1 400 Bad Request")
        let refused = try await harness.recorder.first { if case .handshakeRefused = $0 { true } else { false } }
        if case .handshakeRefused(let refusal) = refused { #expect(refusal.reason.contains("malformed HTTP request")) }
        try await harness.shutdown()
    }

    @Test func bothBlipScopeClientsReachAnUpstreamThatWantsConnectionUpgradeSpelledExactly() async throws {
        let harness = try await RelayHarness.start(upstream: Self.liteCoreLikeUpstream)
        let relayed = try #require(try await harness.connect().connection, "the relay's upstream request was refused")
        #expect(relayed.subprotocol == "BLIP_3+CBMobile_3")
        var direct = BLIPWebSocketClient.Configuration()
        direct.port = harness.upstream.localAddress.port!
        direct.subprotocols = ["BLIP_3+CBMobile_3"]
        let group = harness.group
        let frozen = direct
        let outcome = try await withTimeout { try await BLIPWebSocketClient.connect(frozen, group: group) }
        let connection = try #require(outcome.connection, "BLIPWebSocketClient's own request was refused")
        try await connection.close()
        try await relayed.close()
        try await harness.shutdown()
    }
}
