import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOCore
import Testing
@testable import Relay

@Suite struct RelayTLSTests {
    @Test func wssOnBothSides() async throws {
        let certificate = try await TestCertificate.make()
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
        let serverTLS = BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        let harness = try await RelayHarness.start(upstream: { $0.tls = serverTLS })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.0 == .badGateway)
        #expect(refused.body.contains("upstream"), "the body says why: \(refused.body)")
        #expect(harness.upstreamConnections.all.isEmpty, "no session reached the upstream")
        try await harness.shutdown()
    }
}
