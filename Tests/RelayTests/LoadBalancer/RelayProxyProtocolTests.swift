import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Policy
import Prometheus
import ProxyProtocol
import Testing
@testable import Relay

/// `--proxy-protocol` through real sockets: a test load balancer (``TCPTap`` with a PROXY header
/// as its prelude) in front of the relay, an echo upstream behind it that records the
/// `X-Forwarded-For` it is sent.
@Suite("Relay behind a load balancer: the PROXY protocol")
struct RelayProxyProtocolTests {
    /// A relay that expects PROXY headers, an upstream recording each upgrade's X-Forwarded-For.
    struct Fixture {
        let harness: RelayHarness
        let forwardedFor: NIOLockedValueBox<[String?]>
        let registry: PrometheusCollectorRegistry

        static func start(policy yaml: String? = nil, captureDirectory: String? = nil,
                          tls: (BLIPServerTLS, BLIPClientTLS)? = nil,
                          _ configure: @escaping @Sendable (inout ProxyProtocolSettings) -> Void = { _ in }) async throws -> Fixture {
            let seen = NIOLockedValueBox<[String?]>([])
            let registry = PrometheusCollectorRegistry()
            let metrics = MetricsObserver(metrics: RelayMetrics(factory: PrometheusMetricsFactory(registry: registry)))
            let store = try yaml.map { PolicyStore(document: try PolicyDocument(yaml: $0), dryRun: false) }
            let harness = try await RelayHarness.start(upstream: { upstream in
                let choose = upstream.decide
                upstream.decide = { head in
                    seen.withLockedValue { $0.append(head.headers[canonicalForm: "x-forwarded-for"].joined(separator: ", ")) }
                    return choose(head)
                }
            }, relay: { relay in
                var settings = ProxyProtocolSettings()
                configure(&settings)
                relay.proxyProtocol = settings
                relay.policy = store
                relay.captureDirectory = captureDirectory
                if let tls { relay.serverTLS = tls.0 }
            }, clientTLS: tls?.1, observers: [metrics])
            return Fixture(harness: harness, forwardedFor: seen, registry: registry)
        }

        /// A load balancer in front of the relay that starts each connection with `header`.
        func balancer(_ header: @escaping @Sendable (Channel) -> [UInt8]) async throws -> TCPTap {
            try await TCPTap.start(group: harness.group, targetPort: harness.relayAddress.port!, prelude: header)
        }

        func connect(through tap: TCPTap, headers: HTTPHeaders = [:]) async throws -> BLIPWebSocketClient.Outcome {
            try await harness.connect(headers: headers) { $0.port = tap.port }
        }

        /// The counter of refusals for `reason`, from a scrape.
        func refusals(_ reason: String) -> Int? {
            let scrape = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            let line = scrape.split(separator: "\n").first {
                $0.hasPrefix("blipscope_proxy_protocol_refusals_total{") && $0.contains("reason=\"\(reason)\"")
            }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") }
        }
    }

    static func endpoint(_ text: String, _ port: UInt16) -> ProxyEndpoint {
        let address = try! SocketAddress(ipAddress: text, port: 0)
        var bytes: [UInt8] = []
        switch address {
        case .v4(let v4): withUnsafeBytes(of: v4.address.sin_addr) { bytes = Array($0) }
        case .v6(let v6): withUnsafeBytes(of: v6.address.sin6_addr) { bytes = Array($0) }
        default: break
        }
        return ProxyEndpoint(address: ProxyAddress(bytes: bytes)!, port: port)
    }

    /// The relay's session for the one client that connected.
    static func opened(_ harness: RelayHarness) async throws -> SessionInfo {
        try await harness.recorder.first(within: 30) { if case .sessionOpened(let info) = $0 { info } else { nil } }
    }

    @Test("a version 1 header: the session, its log line and X-Forwarded-For name the client it carries, appended to the client's own")
    func version1() async throws {
        let directory = RelayCaptureTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture = try await Fixture.start(captureDirectory: directory)
        let header = ProxyHeader.proxied(source: Self.endpoint("203.0.113.7", 40_001), destination: Self.endpoint("198.51.100.9", 443))
        let tap = try await fixture.balancer { _ in header.version1Bytes }
        let outcome = try await fixture.connect(through: tap, headers: ["X-Forwarded-For": "192.0.2.55"])
        let client = try #require(outcome.connection, "admitted through the load balancer")
        let info = try await Self.opened(fixture.harness)
        #expect(info.clientAddress == "203.0.113.7")
        #expect(info.clientPort == 40_001)
        #expect(info.client.proxy?.ipAddress == "127.0.0.1", "the balancer is the connection's peer")
        #expect(info.client.destination?.ipAddress == "198.51.100.9")
        let line = LogLine(format: .text, redactBodies: false, withBody: false).opened(info).finish()
        #expect(line.contains("client=203.0.113.7") && line.contains("via=127.0.0.1:"), "\(line)")
        #expect(fixture.forwardedFor.withLockedValue { $0 } == ["192.0.2.55, 203.0.113.7"])
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("through"))) }
        #expect(String(buffer: reply.body) == "through", "the bytes after the header reached the upstream whole")
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        try await tap.close()
        try await fixture.harness.shutdown()
        let records = try RelayCaptureTests.files(in: directory).flatMap { try RelayCaptureTests.records($0) }
        let handshake = try #require(records.compactMap { if case .handshake(let h) = $0 { h } else { nil } }.first)
        #expect(handshake.clientAddress == "203.0.113.7:40001", "the capture names the proxied client")
    }

    @Test("a version 2 header (IPv6, with TLVs) names the client; a LOCAL one (a health check) keeps the socket's address")
    func version2AndLocal() async throws {
        let fixture = try await Fixture.start()
        let header = ProxyHeader.proxied(source: Self.endpoint("2001:db8::7", 50_000), destination: Self.endpoint("2001:db8::1", 443))
        let tlvs: [(type: UInt8, value: [UInt8])] = [(0x01, Array("h2".utf8)), (0x05, Array("id-42".utf8))]
        let tap = try await fixture.balancer { _ in header.version2Bytes(tlvs: tlvs) }
        let client = try #require(try await fixture.connect(through: tap).connection)
        let info = try await Self.opened(fixture.harness)
        #expect(info.clientAddress == "2001:db8::7")
        #expect(info.client.description == "[2001:db8::7]:50000")
        #expect(fixture.forwardedFor.withLockedValue { $0 } == ["2001:db8::7"])
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()

        let local = try await fixture.balancer { _ in ProxyHeader.local.version2Bytes() }
        let checked = try #require(try await fixture.connect(through: local).connection)
        let second = try await fixture.harness.recorder.first(within: 30) {
            if case .sessionOpened(let info) = $0, info.id != 1 { info } else { nil }
        }
        #expect(second.clientAddress == "127.0.0.1", "LOCAL: the connection's own peer")
        #expect(second.client.proxy == nil)
        try await checked.close()
        try await tap.close()
        try await local.close()
        try await fixture.harness.shutdown()
    }

    @Test("over wss the header comes before TLS: read first, the TLS handshake and the session follow")
    func beforeTLS() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        let fixture = try await Fixture.start(tls: (serverTLS, BLIPClientTLS(caBundlePath: certificate.certificatePath)))
        let header = ProxyHeader.proxied(source: Self.endpoint("192.0.2.44", 3_333), destination: Self.endpoint("192.0.2.1", 443))
        let tap = try await fixture.balancer { _ in header.version2Bytes() }
        let client = try #require(try await fixture.connect(through: tap).connection)
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("sealed"))) }
        #expect(String(buffer: reply.body) == "sealed")
        #expect(try await Self.opened(fixture.harness).clientAddress == "192.0.2.44")
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        try await tap.close()
        try await fixture.harness.shutdown()
    }

    @Test("a connection without a header, or with a malformed one, is closed unanswered, logged with its reason and counted")
    func missingAndMalformed() async throws {
        let fixture = try await Fixture.start()
        #expect(fixture.refusals("not_proxy") == 0, "every reason is in a scrape before any refusal")
        // A client that came around the balancer: its upgrade request is no header.
        await #expect(throws: ChannelError.self, "closed without an HTTP answer") { try await fixture.harness.connect() }
        let missing = try await fixture.harness.recorder.first(within: 30) { if case .proxyRefused(let r) = $0 { r } else { nil } }
        #expect(missing.reason.label == "not_proxy")
        #expect(missing.reason.description.contains("starts with \"GET /db/_blip"), "\(missing.reason)")
        #expect(missing.peer?.ipAddress == "127.0.0.1")
        let line = LogLine(format: .text, redactBodies: false, withBody: false).proxyRefused(missing).finish()
        #expect(line.contains("event=proxy-refused") && line.contains("kind=not_proxy"), "\(line)")

        let tap = try await fixture.balancer { _ in Array("PROXY TCP4 203.0.113.7 10.0.0.1 99999 443\r\n".utf8) }
        await #expect(throws: ChannelError.self) { try await fixture.connect(through: tap) }
        let second = try await fixture.harness.recorder.first(within: 30) {
            if case .proxyRefused(let r) = $0, r.reason.label == "malformed" { r } else { nil }
        }
        #expect(second.reason.description.contains("malformed PROXY protocol header"))
        #expect(fixture.harness.upstreamConnections.all.isEmpty, "the upstream was never dialed")
        #expect(fixture.refusals("not_proxy") == 1)
        #expect(fixture.refusals("malformed") == 1)
        #expect(!fixture.harness.recorder.all.contains { if case .handshakeRefused = $0 { true } else { false } },
                "one refusal each, no 400 or 408 after it")
        try await tap.close()
        try await fixture.harness.shutdown()
    }

    @Test("a header not complete within the header timeout is refused as such")
    func headerTimeout() async throws {
        let fixture = try await Fixture.start { $0.headerTimeout = .milliseconds(200) }
        // A balancer that stalls mid-header, sending nothing more.
        let stalled = try await RawUpgradeClient.send("PROXY TCP4 203.0.", port: fixture.harness.relayAddress.port!,
                                                      group: fixture.harness.group)
        await #expect(throws: ChannelError.self, "closed unanswered") { try await stalled.responseHead() }
        let refused = try await fixture.harness.recorder.first(within: 30) { if case .proxyRefused(let r) = $0 { r } else { nil } }
        #expect(refused.reason == .timeout(.milliseconds(200)))
        #expect(fixture.refusals("timeout") == 1)
        try await fixture.harness.shutdown()
    }

    @Test("a connection rule's clientIP matches the address the header carries, not the socket's")
    func policyMatchesTheProxiedAddress() async throws {
        let fixture = try await Fixture.start(policy: """
            connections:
              rules:
                - { name: no-test-net, match: { clientIP: 203.0.113.0/24 }, deny: true }
                - { name: no-loopback, match: { clientIP: 127.0.0.0/8 }, deny: true }
            """)
        let denied = try await fixture.balancer { _ in
            ProxyHeader.proxied(source: Self.endpoint("203.0.113.7", 1_000), destination: Self.endpoint("10.0.0.1", 443)).version2Bytes()
        }
        let refused = try #require(refusal(try await fixture.connect(through: denied)))
        #expect(refused.status == .forbidden && refused.body.contains("no-test-net"), "\(refused.body)")
        let event = try await fixture.harness.recorder.first(within: 30) { if case .handshakeRefused(let r) = $0 { r } else { nil } }
        #expect(event.clientAddress == "203.0.113.7")

        // Over loopback too, which the second rule denies: admitted, as the header names 198.51.100.1.
        let admitted = try await fixture.balancer { _ in
            ProxyHeader.proxied(source: Self.endpoint("198.51.100.1", 1_001), destination: Self.endpoint("10.0.0.1", 443)).version1Bytes
        }
        let client = try #require(try await fixture.connect(through: admitted).connection, "admitted by the proxied address")
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        try await denied.close()
        try await admitted.close()
        try await fixture.harness.shutdown()
    }
}
