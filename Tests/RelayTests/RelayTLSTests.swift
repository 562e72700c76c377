import BLIPCore
import BLIPNIO
import NIOCore
import Testing
@testable import Relay

@Suite struct RelayTLSTests {
    @Test func wssOnBothSides() async throws {
        let certificate = try TestCertificate.make()
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
}
