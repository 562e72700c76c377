import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Gateway
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ReplicationNames
import Testing
@testable import Relay

/// Several Sync Gateway nodes behind one relay, over real sockets: embedded gateways as nodes,
/// scripted upstreams where a node must refuse.
@Suite struct UpstreamNodesTests {
    @Test func sessionsGoToTheNodeWithTheFewestLiveSessions() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let a = try await NodesFixture.gateway(group: group), b = try await NodesFixture.gateway(group: group)
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(a.port), NodesFixture.url(b.port)], group: group)
        var sessions: [(client: BLIPConnection, node: UpstreamNode)] = []
        for _ in 0..<4 { sessions.append(try await fixture.connected()) }
        let nodeA = NodesFixture.url(a.port).node, nodeB = NodesFixture.url(b.port).node
        // The embedded gateway answers the health check as Sync Gateway does: 200 at its root.
        let check = try await UpstreamHealthProbe(sslContext: nil, timeout: .seconds(30)).check(nodeA, on: group.next()).get()
        #expect(try check.get() == 200)
        #expect(sessions.filter { $0.node == nodeA }.count == 2 && sessions.filter { $0.node == nodeB }.count == 2)
        // Both of b's sessions end: the next two sessions go to b, which has none.
        for session in sessions where session.node == nodeB { try await session.client.close() }
        try await fixture.until("b has no live session") { $0.first { $0.node == nodeB }?.live == 0 }
        let next = [try await fixture.connected(), try await fixture.connected()]
        #expect(next.map(\.node) == [nodeB, nodeB])
        #expect(try await fixture.metric(#"blipscope_upstream_node_sessions_total{node="\#(nodeB.label)"}"#) == 4)
        #expect(try await fixture.metric(#"blipscope_upstream_node_sessions_active{node="\#(nodeB.label)"}"#) == 2)
        #expect(try await fixture.metric(#"blipscope_upstream_node_sessions_active{node="\#(nodeA.label)"}"#) == 2)
        let listed = try await fixture.get("/sessions").body
        #expect(listed.contains(#""node":"\#(nodeA.label)""#) && listed.contains(#""node":"\#(nodeB.label)""#))
        let web = try await fixture.get("/api/sessions").body
        #expect(web.contains(#""node":"\#(nodeA.label)""#) && web.contains(#""node":"\#(nodeB.label)""#), "\(web)")
        #expect(web.contains(#""upstream":"ws://\#(nodeB.label)""#), "the upstream is the node's URL")
        for session in sessions + next { try? await session.client.close() }
        try await fixture.shutdown()
        try await a.stop()
        try await b.stop()
        try await group.shutdownGracefully()
    }

    @Test func aNodeWhosePortIsClosedIsPassedOverBeforeTheClients101() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let closed = try ClosedPort()
        let gateway = try await NodesFixture.gateway(group: group)
        let dead = NodesFixture.url(closed.port).node, live = NodesFixture.url(gateway.port).node
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(closed.port), NodesFixture.url(gateway.port)],
                                                   group: group)
        let first = try await fixture.connected()
        #expect(first.node == live, "the closed port was tried first, then the gateway")
        let opened = try await fixture.logLine(containing: "event=open session=1 ")
        #expect(opened.contains("upstream=ws://\(live.label) ") && opened.hasSuffix("node=\(live.label)"), "\(opened)")
        _ = try await fixture.logLine(containing: "upstream node \(dead.label) failed session 1 before its 101")
        // Without checks nothing takes the node down (nothing would bring it back): the next
        // session, its turn on the node with no live session, passes over it again.
        #expect(fixture.relay.balancer?.state(of: dead)?.up == true)
        let second = try await fixture.connected()
        #expect(second.node == live)
        #expect(try await fixture.metric(#"blipscope_upstream_node_skips_total{node="\#(dead.label)",reason="unreachable"}"#) == 2)
        #expect(try await fixture.metric(#"blipscope_upstream_node_sessions_total{node="\#(live.label)"}"#) == 2)
        #expect(try await fixture.metric(#"blipscope_upstream_node_sessions_total{node="\#(dead.label)"}"#) == 0)
        #expect(fixture.relay.balancer?.state(of: dead)?.live == 0, "a failed dial releases its pick")
        try await first.client.close()
        try await second.client.close()
        try await fixture.shutdown()
        try await gateway.stop()
        try await group.shutdownGracefully()
        withExtendedLifetime(closed) {}
    }

    @Test func aNodeAnswering503IsPassedOverAndA401IsTheClientsAnswer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let asked = NIOLockedValueBox([String]())
        func scripted(_ name: String, _ decision: BLIPHandshakeDecision) async throws -> BLIPWebSocketServer {
            var configuration = BLIPWebSocketServer.Configuration()
            configuration.decide = { _ in asked.withLockedValue { $0.append(name) }; return decision }
            return try await BLIPWebSocketServer.start(configuration, group: group)
        }
        let busy = try await scripted("busy", .refuse(status: .serviceUnavailable, headers: ["Retry-After": "1"], body: "busy"))
        let gateway = try await NodesFixture.gateway(group: group)
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(busy.localAddress.port!), NodesFixture.url(gateway.port)],
                                                   group: group)
        let session = try await fixture.connected()
        #expect(session.node == NodesFixture.url(gateway.port).node)
        #expect(asked.withLockedValue { $0 } == ["busy"])
        let busyNode = NodesFixture.url(busy.localAddress.port!).node
        #expect(try await fixture.metric(#"blipscope_upstream_node_skips_total{node="\#(busyNode.label)",reason="refused"}"#) == 1)
        #expect(fixture.relay.balancer?.state(of: busyNode)?.up == true, "an HTTP answer takes no node down")
        try await session.client.close()
        try await fixture.shutdown()

        // A 401 is the client's answer: passed on as it came, the next node never asked.
        let login = try await scripted("login", .refuse(status: .unauthorized,
                                                         headers: ["WWW-Authenticate": "Basic realm=\"SG\""], body: "Login required"))
        let other = try await scripted("other", .accept(subprotocol: "BLIP_3+CBMobile_3", headers: [:]))
        let second = try await NodesFixture.start(nodes: [NodesFixture.url(login.localAddress.port!),
                                                          NodesFixture.url(other.localAddress.port!)], group: group)
        let refused = try #require(refusal(try await second.connect()))
        #expect(refused.status == .unauthorized)
        #expect(refused.headers.first(name: "WWW-Authenticate") == "Basic realm=\"SG\"")
        #expect(refused.body == "Login required")
        #expect(asked.withLockedValue { $0 } == ["busy", "login"], "the other node was not asked")
        try await second.shutdown()
        for server in [busy, login, other] { try? await server.close() }
        try await gateway.stop()
        try await group.shutdownGracefully()
    }

    /// A node that accepts the connection and never answers the upgrade is passed over once the
    /// handshake timeout is up; the client gets the next node's 101.
    @Test func aSilentNodeIsPassedOverAtTheHandshakeTimeout() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var configuration = BLIPWebSocketServer.Configuration()
        configuration.decide = { _ in .hang }
        let silent = try await BLIPWebSocketServer.start(configuration, group: group)
        let gateway = try await NodesFixture.gateway(group: group)
        let silentNode = NodesFixture.url(silent.localAddress.port!).node
        // Long enough for a loaded machine's loopback handshake with the gateway.
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(silentNode.port), NodesFixture.url(gateway.port)],
                                                   group: group) { $0.upstreamHandshakeTimeout = .seconds(3) }
        let session = try await fixture.connected()
        #expect(session.node == NodesFixture.url(gateway.port).node)
        #expect(try await fixture.metric(#"blipscope_upstream_node_skips_total{node="\#(silentNode.label)",reason="timeout"}"#) == 1)
        try await session.client.close()
        try await fixture.shutdown()
        try? await silent.close()
        try await gateway.stop()
        try await group.shutdownGracefully()
    }

    @Test func allNodesFailingGiveTheClientTheLastFailure() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let closed = try ClosedPort()
        var configuration = BLIPWebSocketServer.Configuration()
        configuration.decide = { _ in .refuse(status: .serviceUnavailable, headers: [:], body: "going away") }
        let busy = try await BLIPWebSocketServer.start(configuration, group: group)
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(closed.port), NodesFixture.url(busy.localAddress.port!)],
                                                   group: group)
        let refused = try #require(refusal(try await fixture.connect()))
        #expect(refused.status == .serviceUnavailable && refused.body == "going away")
        try await fixture.shutdown()
        try? await busy.close()
        try await group.shutdownGracefully()
        withExtendedLifetime(closed) {}
    }

    /// A node that goes away under live sessions: its session ends on both sides with the node's
    /// own close, logged with the session's line; the other node's session goes on, and the next
    /// session goes to the node that is left.
    @Test func aNodeStoppingUnderLiveSessionsEndsOnlyItsOwn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let a = try await NodesFixture.gateway(group: group), b = try await NodesFixture.gateway(group: group)
        let nodeA = NodesFixture.url(a.port).node, nodeB = NodesFixture.url(b.port).node
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(a.port), NodesFixture.url(b.port)], group: group)
        let first = try await fixture.connected(), second = try await fixture.connected()
        #expect(Set([first.node, second.node]) == [nodeA, nodeB])
        let onA = first.node == nodeA ? first : second, onB = first.node == nodeB ? first : second

        try await b.stop()
        let close = try await withTimeout { try await onB.client.closed.get() }
        #expect(close.code == 1001 && close.reason == "gateway stopping", "the client gets the node's own close")
        let line = try await fixture.logLine(containing: "event=close")
        #expect(line.contains("upstreamClose=") && line.contains("1001") && line.contains("gateway stopping"), "\(line)")
        let reply = try await withTimeout {
            try await onA.client.request(.request(profile: "getCheckpoint", properties: ["client": "still-there"]))
        }
        // The node that is left answers as Sync Gateway does a checkpoint it never saved: 404.
        #expect(reply.type == .error && reply.properties[.errorCode] == "404", "the session on the other node goes on")
        try await fixture.until("b has no live session") { $0.first { $0.node == nodeB }?.live == 0 }
        #expect(try await fixture.connected().node == nodeA, "a new session goes to the node that is left")
        try? await onA.client.close()
        try await fixture.shutdown()
        try await a.stop()
        try await group.shutdownGracefully()
    }

    /// The checker takes a node that went away down (no new sessions), brings it back once it
    /// answers again, and `/readyz` follows: ready while one node is up.
    @Test func aNodeThatGoesAwayIsTakenDownAndComesBack() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let a = try await NodesFixture.gateway(group: group)
        var b: GatewayServer? = try await NodesFixture.gateway(group: group)
        let portB = b!.port
        let nodeA = NodesFixture.url(a.port).node, nodeB = NodesFixture.url(portB).node
        var checks = UpstreamHealthChecks(interval: .milliseconds(50))
        checks.fall = 2
        checks.rise = 2
        let fixture = try await NodesFixture.start(nodes: [NodesFixture.url(a.port), NodesFixture.url(portB)], checks: checks,
                                                   group: group)
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 200, "\(ready.body)")
        #expect(fixture.relay.balancer?.nodes.allSatisfy { $0.up && $0.confirmed } == true, "readiness waited for the checks")

        try await b?.stop()
        b = nil
        // Gone: nothing listens on b's port, which is held until b starts on it again.
        var hold: ClosedPort? = try ClosedPort(port: portB)
        _ = try await fixture.logLine(containing: "upstream node \(nodeB.label) is down after 2 failed checks")
        #expect(try await fixture.get("/readyz").status == 200, "a is still up")
        var sessions: [(client: BLIPConnection, node: UpstreamNode)] = []
        for _ in 0..<3 { sessions.append(try await fixture.connected()) }
        #expect(sessions.allSatisfy { $0.node == nodeA }, "the down node gets no new session")
        #expect(try await fixture.metric(#"blipscope_upstream_node_up{node="\#(nodeB.label)"}"#) == 0)
        #expect((try await fixture.metric(#"blipscope_upstream_node_check_failures_total{node="\#(nodeB.label)"}"#) ?? 0) >= 2)
        #expect(try await fixture.metric(#"blipscope_upstream_node_skips_total{node="\#(nodeB.label)",reason="unreachable"}"#) == 0)

        withExtendedLifetime(hold) {}
        hold = nil  // closed: the port is free for b again
        b = try await NodesFixture.gateway(port: portB, group: group)
        _ = try await fixture.logLine(containing: "upstream node \(nodeB.label) is up again after 2 passed checks")
        #expect(try await fixture.metric(#"blipscope_upstream_node_up{node="\#(nodeB.label)"}"#) == 1)
        let back = try await fixture.connected()
        #expect(back.node == nodeB, "b is up again and has the fewest sessions")
        #expect(fixture.log.all.filter { $0.contains("\(nodeB.label) is down") }.count == 1, "each transition logged once")

        try await a.stop()
        try await b?.stop()
        b = nil
        try await fixture.until("both nodes down") { $0.allSatisfy { !$0.up } }
        let notReady = try await fixture.get("/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.body.contains("default: no healthy node (\(nodeA.label) down, \(nodeB.label) down)"), "\(notReady.body)")
        for session in sessions + [back] { try? await session.client.close() }
        try await fixture.shutdown()
        try await group.shutdownGracefully()
    }

    /// A `wss://` node is checked through TLS with the trust the sessions use: trusted, its checks
    /// pass; not trusted (the system's roots do not name the test certificate), they fail.
    @Test func aWssNodeIsCheckedOverTLSWithTheSessionsTrust() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        var server = BLIPWebSocketServer.Configuration()
        server.tls = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        // Its answer to GET / is 400 "expected a WebSocket upgrade": below 500, a passed check.
        server.decide = { _ in .accept(subprotocol: "BLIP_3+CBMobile_3", headers: [:]) }
        let node = try await BLIPWebSocketServer.start(server, group: group)
        let url = UpstreamURL(secure: true, host: "127.0.0.1", port: node.localAddress.port!)
        var checks = UpstreamHealthChecks(interval: .milliseconds(50))
        checks.fall = 1
        checks.rise = 1
        let trusting = try await NodesFixture.start(nodes: [url], checks: checks, group: group) {
            $0.upstreamTLS = BLIPClientTLS(caBundlePath: certificate.certificatePath)
        }
        let trustingReady = try await trusting.get("/readyz")
        #expect(trustingReady.status == 200, "\(trustingReady.body) \(trusting.log.all)")
        #expect(trusting.relay.balancer?.state(of: url.node)?.confirmed == true)
        #expect(try await trusting.metric(#"blipscope_upstream_node_check_failures_total{node="\#(url.node.label)"}"#) == 0)
        let untrusting = try await NodesFixture.start(nodes: [url], checks: checks, group: group)
        _ = try await untrusting.logLine(containing: "upstream node \(url.node.label) is down after 1 failed check")
        let notReady = try await untrusting.get("/readyz")
        #expect(notReady.status == 503, "\(notReady.body)")
        #expect((try await untrusting.metric(#"blipscope_upstream_node_check_failures_total{node="\#(url.node.label)"}"#) ?? 0) >= 1)
        try await trusting.shutdown()
        try await untrusting.shutdown()
        try? await node.close()
        try await group.shutdownGracefully()
    }
}
