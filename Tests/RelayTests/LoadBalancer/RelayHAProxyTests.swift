import BLIPCore
import BLIPNIO
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// The relay behind real HAProxy (`send-proxy-v2`, `option httpchk GET /readyz`): a client
/// through HAProxy reaches the upstream and the relay knows the client by the address HAProxy
/// saw; once the relay drains, HAProxy marks it down and sends it nobody new.
@Suite("Relay behind HAProxy")
struct RelayHAProxyTests {
    @Test("the client HAProxy saw is the relay's client; draining, the relay goes DOWN in HAProxy and takes no new client")
    func behindHAProxy() async throws {
        let forwardedFor = NIOLockedValueBox<[String]>([])
        let fixture = try await MetricsFixture.start(upstream: { upstream in
            let choose = upstream.decide
            upstream.decide = { head in
                forwardedFor.withLockedValue { $0 += head.headers[canonicalForm: "x-forwarded-for"].map(String.init) }
                return choose(head)
            }
        }, relay: { $0.proxyProtocol = ProxyProtocolSettings() })
        let harness = fixture.harness
        let haproxy = try await HAProxyProcess.start(relayPort: harness.relayAddress.port!, adminPort: fixture.adminPort)
        do {
            try await haproxy.waitForRelay { status, check in status == "UP" && check.hasSuffix("L7OK") }
            let client = try #require(try await harness.connect { $0.port = haproxy.frontendPort }.connection,
                                      "admitted through HAProxy")
            let clientPort = try #require(client.channel.localAddress?.port)
            let info = try await harness.recorder.first(within: 30) { if case .sessionOpened(let info) = $0 { info } else { nil } }
            #expect(info.clientAddress == "127.0.0.1")
            #expect(info.clientPort == clientPort, "the client's own port, as HAProxy saw it")
            #expect(info.client.proxy != nil && info.client.proxy?.port != clientPort, "the connection came from HAProxy")
            #expect(info.client.destination?.port == haproxy.frontendPort)
            let line = LogLine(format: .text, redactBodies: false, withBody: false).opened(info).finish()
            #expect(line.contains("client=127.0.0.1") && line.contains("via=127.0.0.1:"), "\(line)")
            let report = try await fixture.get("/sessions")
            #expect(report.body.contains("\"clientAddress\":\"127.0.0.1\""), "\(report.body)")
            #expect(forwardedFor.withLockedValue { $0 } == ["127.0.0.1"])
            let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("via haproxy"))) }
            #expect(String(buffer: reply.body) == "via haproxy")
            #expect(!harness.recorder.all.contains { if case .proxyRefused = $0 { true } else { false } },
                    "HAProxy's health checks and the client all passed")

            let drain = Task { await harness.relay.drain(timeout: .seconds(120)) }
            let down = try await haproxy.waitForRelay { status, _ in status.hasPrefix("DOWN") }
            // `* ` before it: the next check is under way.
        #expect(down.check.hasSuffix("L7STS"), "marked down by /readyz's 503: \(down)")
            let late = try? await harness.connect { $0.port = haproxy.frontendPort }
            #expect(late?.connection == nil, "no new session reaches a drained relay")
            #expect(harness.relay.sessionCount == 1, "the live session still runs")
            harness.relay.stopDraining()
            #expect(try await withTimeout { try await client.closed.get() }.code == 1001)
            try await withTimeout { await drain.value }
        } catch {
            await haproxy.stop()
            throw error
        }
        await haproxy.stop()
        try await fixture.admin.shutdown()
        try? await harness.upstream.close()
        try await harness.group.shutdownGracefully()
    }
}
