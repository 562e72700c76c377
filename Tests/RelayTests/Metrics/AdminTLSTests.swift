import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import Relay

/// A fleet's admin listeners are reached over the network: they serve https, and a token that
/// crossed the network in the clear is refused whatever it is.
@Suite struct AdminTLSTests {
    static func head(_ uri: String = "/metrics", authorization: String? = nil) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        if let authorization { head.headers.add(name: "Authorization", value: authorization) }
        return head
    }

    @Test("a token in the clear from off the machine is refused; over TLS, from loopback or without a token it goes on")
    func aClearTokenFromTheNetworkIsRefused() throws {
        let office = try SocketAddress(ipAddress: "10.1.2.3", port: 50_000)
        let clear = AdminAccess(tls: false), tls = AdminAccess(tls: true)
        guard case .refuseClearToken(let reason) = clear.verdict(peer: office, head: Self.head(authorization: "Bearer s3cret")) else {
            Issue.record("a token sent in the clear from 10.1.2.3 was taken")
            return
        }
        #expect(reason.contains("--admin-tls-cert"))
        #expect(clear.verdict(peer: office, head: Self.head("/api/sessions?access_token=s3cret")) != .proceed,
                "the web view's query token counts too")
        #expect(clear.verdict(peer: office, head: Self.head()) == .proceed, "no token, nothing exposed (the token check answers 401)")
        #expect(tls.verdict(peer: office, head: Self.head(authorization: "Bearer s3cret")) == .proceed)
        for local in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
            #expect(clear.verdict(peer: try SocketAddress(ipAddress: local, port: 1), head: Self.head(authorization: "Bearer s3cret")) == .proceed,
                    "\(local) is this machine")
        }
        #expect(clear.verdict(peer: try SocketAddress(ipAddress: "2001:db8::1", port: 1), head: Self.head(authorization: "Bearer x")) != .proceed)
        #expect(clear.verdict(peer: nil, head: Self.head(authorization: "Bearer x")) != .proceed, "an unknown peer is not trusted")
    }

    @Test("over https the token is required and checked; plain HTTP to the https port gets no answer")
    func theAdminListenerServesTLS() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let fixture = try await MetricsFixture.start(
            token: "s3cret", adminTLS: BLIPServerTLS(certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath))
        let group = fixture.harness.group
        let port = fixture.adminPort
        let ca = certificate.certificatePath
        let scraped = try await httpGet(port: port, path: "/metrics", headers: [("Authorization", "Bearer s3cret")], trusting: ca, group: group)
        #expect(scraped.status == 200 && scraped.body.contains("# TYPE blipscope_"))
        #expect(try await httpGet(port: port, path: "/metrics", trusting: ca, group: group).status == 401)
        #expect(try await httpGet(port: port, path: "/metrics", headers: [("Authorization", "Bearer wrong")], trusting: ca, group: group).status == 401)
        let plain = try? await httpGet(port: port, path: "/metrics", headers: [("Authorization", "Bearer s3cret")], group: group)
        #expect(plain.map { $0.status != 200 } ?? true, "a plain request to the https listener is not answered as one")
        try await fixture.shutdown()
    }

    @Test("blipscope relay --admin-tls-cert/--admin-tls-key announces and serves https")
    func theCommandServesHTTPS() async throws {
        let certificate = try await TestCertificate.make()
        defer { certificate.remove() }
        let relay = try BlipscopeExecutable.start([
            "relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--admin", "127.0.0.1:0",
            "--admin-tls-cert", certificate.certificatePath, "--admin-tls-key", certificate.keyPath,
        ])
        defer { relay.kill() }
        let port = try await relay.announcedPort(after: "admin listener at https://")
        let group = MultiThreadedEventLoopGroup.singleton
        #expect(try await httpGet(port: port, path: "/healthz", trusting: certificate.certificatePath, group: group).status == 200)
    }
}
