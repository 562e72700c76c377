import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOCore
import Testing
@testable import Relay

@Suite struct RelayTLSTests {
    @Test func wssOnBothSides() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        let trust = BLIPClientTLS(caBundlePath: certificate.certificatePath)
        let harness = try await RelayHarness.start(upstream: { $0.tls = serverTLS },
                                                   relay: { config in
                                                       config.serverTLS = serverTLS
                                                       config.upstreamTLS = trust
                                                   },
                                                   clientTLS: trust)
        let client = try await harness.connected()
        let reply = try await withTimeout {
            try await client.request(.request(profile: "echo", body: body("secure"), compressed: true))
        }
        #expect(String(buffer: reply.body) == "secure")
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()
    }

    /// The upstream's certificate is not trusted (no CA bundle names it, and insecure is off): the
    /// TLS handshake fails and the client gets 502 at once, with the reason in the body.
    @Test func anUntrustedUpstreamCertificateIs502() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        let harness = try await RelayHarness.start(upstream: { $0.tls = serverTLS })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.0 == .badGateway)
        #expect(refused.body.contains("upstream"), "the body says why: \(refused.body)")
        #expect(harness.upstreamConnections.all.isEmpty, "no session reached the upstream")
        try await harness.shutdown()
    }

    /// The upstream trust store is read only when some database goes to a wss upstream: a relay in
    /// front of ws:// never parses it (a CA bundle that does not exist is then never opened), and
    /// one in front of wss:// fails at start when it cannot be read.
    @Test func theUpstreamTrustIsReadOnlyForWssUpstreams() async throws {
        let missing = BLIPClientTLS(caBundlePath: "/nonexistent/blipscope-ca-\(UInt64.random(in: 1 ... .max)).pem")
        let plain = try await RelayHarness.start(relay: { $0.upstreamTLS = missing })
        let client = try await plain.connected()
        let reply = try await withTimeout { try await client.request(.request(profile: "echo", body: body("plain"))) }
        #expect(String(buffer: reply.body) == "plain")
        try await client.close()
        _ = try await plain.recorder.sessionClosed()
        try await plain.shutdown()

        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        await #expect(throws: (any Error).self) {
            let secure = try await RelayHarness.start(upstream: { $0.tls = serverTLS }, relay: { $0.upstreamTLS = missing })
            try await secure.shutdown()
        }
    }

    @Test func anyWssUpstreamCountsAsSecure() throws {
        let plain = try #require(UpstreamURL("ws://127.0.0.1:4984"))
        let secure = try #require(UpstreamURL("wss://127.0.0.1:4984"))
        #expect(!UpstreamRouting.single(plain).anySecure)
        #expect(UpstreamRouting.single(secure).anySecure)
        #expect(UpstreamRouting(default: plain, perDatabase: ["db": secure]).anySecure)
        #expect(UpstreamRouting(default: nil, perDatabase: ["db": secure]).anySecure)
        #expect(!UpstreamRouting(default: nil, perDatabase: ["db": plain]).anySecure)
    }
}
