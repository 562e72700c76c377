import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Policy
import Prometheus
import Testing
@testable import Relay

/// Connection rules through real sockets: a client's upgrade to the relay is refused with the
/// status, Retry-After and reason of the rule that refused it, or admitted.
@Suite("Relay: connection rules at the handshake")
struct RelayPolicyTests {
    static let aliceAuth: HTTPHeaders = ["Authorization": "Basic YWxpY2U6c2VjcmV0"]  // alice:secret

    static func harness(_ yaml: String, dryRun: Bool = false, observers: [any RelayObserver] = [],
                        tls: (BLIPServerTLS, BLIPClientTLS)? = nil) async throws -> (RelayHarness, PolicyStore) {
        let store = PolicyStore(document: try PolicyDocument(yaml: yaml), dryRun: dryRun)
        let harness = try await RelayHarness.start(relay: { config in
            config.policy = store
            config.policyDryRun = dryRun
            if let tls { config.serverTLS = tls.0 }
        }, clientTLS: tls?.1, observers: observers)
        return (harness, store)
    }

    @Test("a denied client IP and a denied user get 403 naming the rule; the upstream is never dialed")
    func deniedIPAndUser() async throws {
        let (harness, _) = try await Self.harness("""
            connections:
              rules:
                - { name: no-alice, match: { user: alice }, deny: { message: "alice is suspended" } }
                - { name: loopback-v6, match: { clientIP: "::1/128" }, deny: true }
            """)
        let user = try #require(refusal(try await harness.connect(headers: Self.aliceAuth)))
        #expect(user.status == .forbidden)
        #expect(user.body.contains("no-alice") && user.body.contains("alice is suspended"))
        #expect(user.headers.first(name: "Retry-After") == nil)
        let client = try await harness.connected()  // anonymous from 127.0.0.1: no rule applies
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()

        let (blocked, _) = try await Self.harness("connections: { rules: [{ name: no-loopback, match: { clientIP: 127.0.0.0/8 }, deny: true }] }")
        let ip = try #require(refusal(try await blocked.connect()))
        #expect(ip.status == .forbidden && ip.body.contains("no-loopback"))
        let logged = try await blocked.recorder.first { if case .handshakeRefused = $0 { true } else { false } }
        if case .handshakeRefused(let event) = logged { #expect(event.reason.contains("no-loopback")) }
        #expect(blocked.upstreamConnections.all.isEmpty)
        try await blocked.shutdown()
    }

    @Test("over maxSessions: 503 with Retry-After; a closed session frees its slot; the refusal is counted")
    func maxSessions() async throws {
        let registry = PrometheusCollectorRegistry()
        let observer = MetricsObserver(metrics: RelayMetrics(factory: PrometheusMetricsFactory(registry: registry)))
        let (harness, store) = try await Self.harness("connections: { rules: [{ name: one-at-a-time, maxSessions: { perUser: 1, retryAfter: 3s } }] }",
                                                      observers: [observer])
        let first = try #require(try await harness.connect(headers: Self.aliceAuth).connection)
        let second = try #require(refusal(try await harness.connect(headers: Self.aliceAuth)))
        #expect(second.status == .serviceUnavailable)
        #expect(second.headers.first(name: "Retry-After") == "3")
        #expect(second.body.contains("one-at-a-time"))
        let anonymous = try await harness.connected()  // anonymous sessions are not counted per user
        #expect(store.state.sessionCounts.perUser["alice"] == 1)
        let metrics = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(metrics.split(separator: "\n").contains { $0.hasPrefix("blipscope_policy_verdicts_total") && $0.contains("one-at-a-time") && $0.hasSuffix(" 1") })
        try await first.close()
        _ = try await harness.recorder.first { if case .sessionClosed(let s) = $0 { s.info.user == "alice" } else { false } }
        // The slot is released by the session's finish callbacks, which run on its event loop
        // right after the event: a task queued on every loop now runs after them.
        for loop in harness.group.makeIterator() { try await loop.submit {}.get() }
        #expect(store.state.sessionCounts.perUser["alice"] == nil)
        let again = try #require(try await harness.connect(headers: Self.aliceAuth).connection)
        try await again.close()
        try await anonymous.close()
        try await harness.shutdown()
    }

    @Test("the handshake rate per IP engages with 429 and Retry-After")
    func handshakeRate() async throws {
        let (harness, _) = try await Self.harness("connections: { rules: [{ name: flood, handshakeRate: { perSecond: 0.01, burst: 2 } }] }")
        let first = try await harness.connected()
        let second = try await harness.connected()
        let third = try #require(refusal(try await harness.connect()))
        #expect(third.status == .tooManyRequests)
        let retryAfter = try #require(third.headers.first(name: "Retry-After").flatMap(Int.init))
        #expect(retryAfter >= 1 && retryAfter <= 100)
        try await first.close()
        try await second.close()
        try await harness.shutdown()
    }

    @Test("requireTLS refuses plain ws and admits wss")
    func requireTLS() async throws {
        let rule = "connections: { rules: [{ name: wss-only, requireTLS: true }] }"
        let (plain, _) = try await Self.harness(rule)
        let refused = try #require(refusal(try await plain.connect()))
        #expect(refused.status == .forbidden && refused.body.contains("wss-only"))
        try await plain.shutdown()

        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        let (secure, _) = try await Self.harness(rule, tls: (serverTLS, BLIPClientTLS(caBundlePath: certificate.certificatePath)))
        let client = try await secure.connected()
        try await client.close()
        try await secure.shutdown()
    }

    @Test("dry run: a refusing rule is only logged, the client gets in")
    func dryRun() async throws {
        let (harness, store) = try await Self.harness("connections: { rules: [{ name: wss-only, requireTLS: true }] }", dryRun: true)
        let client = try await harness.connected()
        #expect(store.state.sessionCounts.total == 1)
        try await client.close()
        try await harness.shutdown()
    }

    @Test("a reload applies to the next handshake")
    func reload() async throws {
        let (harness, store) = try await Self.harness("rules: []")
        let before = try await harness.connected()
        store.replace(with: try PolicyDocument(yaml: "connections: { default: deny }"))
        let after = try #require(refusal(try await harness.connect()))
        #expect(after.status == .forbidden && after.body.contains("default"))
        try await before.close()
        try await harness.shutdown()
    }
}
