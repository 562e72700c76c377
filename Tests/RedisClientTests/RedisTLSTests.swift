import BLIPTestSupport
import Foundation
@testable import RedisClient
import Testing

/// `rediss://` against a redis-server with TLS only (`--port 0 --tls-port P`), its certificate
/// signed by a throwaway CA: trusted through the CA file, refused under another CA.
@Suite(.timeLimit(.minutes(5))) struct RedisTLSTests {
    typealias Clients = RedisTestClients

    static func withTLSServer(password: String? = nil, _ body: (RedisServerProcess, TestCertificateAuthority) async throws -> Void) async throws {
        let authority = try await TestCertificateAuthority.make()
        defer { authority.remove() }
        let files = RedisServerProcess.TLS(certificatePath: authority.certificatePath, keyPath: authority.keyPath,
                                           caCertificatePath: authority.caCertificatePath)
        try await RedisServerProcess.with(password: password, tls: files) { server in try await body(server, authority) }
    }

    @Test func aServerSignedByTheGivenCAIsTrusted() async throws {
        try await Self.withTLSServer(password: "tls-pass") { server, authority in
            #expect(server.url.hasPrefix("rediss://"))
            let tls = RedisTLS(caFilePath: authority.caCertificatePath)
            try await Clients.withClient(Clients.configuration(server.url, tls: tls)) { redis in
                #expect(try await redis.ping() == "PONG")
                try await redis.set("secure", to: "yes")
                #expect(try await redis.get("secure") == .init(string: "yes"))
            }
            // By name: the certificate names localhost too, which is then also sent as SNI.
            let byName = try Clients.configuration("rediss://:tls-pass@localhost:\(server.port)", tls: tls)
            try await Clients.withConnection(byName) { connection in
                let pong = try await connection.ping()
                #expect(pong == "PONG")
            }
        }
    }

    @Test func aServerUnderAnotherCAIsRefused() async throws {
        let stranger = try await TestCertificateAuthority.make(name: "Some other CA")
        defer { stranger.remove() }
        try await Self.withTLSServer { server, _ in
            let configuration = try Clients.configuration(server.url, tls: RedisTLS(caFilePath: stranger.caCertificatePath))
            let error = await Clients.error { _ = try await RedisConnection.connect(configuration: configuration) }
            #expect(error?.code == .connectFailed)
            #expect(error?.description.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(String(describing: error))")
            // Plain RESP to a TLS port is no answer either.
            let plain = try Clients.configuration("redis://127.0.0.1:\(server.port)", limits: Clients.limits(connectTimeout: .seconds(2)))
            #expect(await Clients.error { _ = try await RedisConnection.connect(configuration: plain) } != nil)
        }
    }

    @Test func aMissingOrEmptyCAFileFailsWhenTheClientIsMade() throws {
        let missing = try RedisConfiguration(url: "rediss://127.0.0.1:1", tls: RedisTLS(caFilePath: "/nonexistent/ca.pem"))
        #expect(throws: RedisError.self) { _ = try RedisClient(configuration: missing) }
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-empty-\(UUID().uuidString).pem")
        try Data().write(to: empty)
        defer { try? FileManager.default.removeItem(at: empty) }
        do {
            _ = try RedisClient(configuration: RedisConfiguration(url: "rediss://127.0.0.1:1", tls: RedisTLS(caFilePath: empty.path)))
            Issue.record("an empty CA file was taken")
        } catch {
            #expect(error.code == .tlsConfigurationFailed)
            #expect(error.description.contains(empty.path))
        }
    }
}
