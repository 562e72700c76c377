import BLIPCore
import BLIPNIO
import BLIPTestSupport
import NIOCore
import NIOHTTP1
import NIOConcurrencyHelpers
import Testing
@testable import Relay

@Suite struct RelayHandshakeTests {
    @Test func wrongPathIs404AndMissingProtocolIs400() async throws {
        let harness = try await RelayHarness.start()
        let notFound = try #require(refusal(try await harness.connect(path: "/db/_changes")))
        #expect(notFound.0 == .notFound)
        let badRequest = try #require(refusal(try await harness.connect(subprotocols: ["chat"])))
        #expect(badRequest.0 == .badRequest)
        #expect(badRequest.2.contains("chat"))
        #expect(badRequest.2.contains("BLIP_3+CBMobile"))
        try await harness.shutdown()
    }

    @Test func forwardsProtocolsAndAuthAndAnswersWithUpstreamChoice() async throws {
        let seen = NIOLockedValueBoxHeaders()
        let harness = try await RelayHarness.start(upstream: { config in
            config.decide = { head in
                seen.set(head.headers)
                var headers = HTTPHeaders()
                headers.add(name: "Set-Cookie", value: "SyncGatewaySession=abc; Path=/db")
                return .accept(subprotocol: "BLIP_3+CBMobile_3", headers: headers)
            }
        })
        let outcome = try await harness.connect(subprotocols: ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"],
                                                headers: ["Authorization": "Basic YWxpY2U6c2VjcmV0",
                                                          "Cookie": "SyncGatewaySession=xyz",
                                                          "Sec-WebSocket-Extensions": "permessage-deflate"])
        let client = try #require(outcome.connection)
        #expect(client.subprotocol == "BLIP_3+CBMobile_3")
        #expect(client.handshakeHeaders.first(name: "Set-Cookie") == "SyncGatewaySession=abc; Path=/db")
        let headers = try #require(seen.get())
        #expect(headers.first(name: "Sec-WebSocket-Protocol") == "BLIP_3+CBMobile_4,BLIP_3+CBMobile_3")
        #expect(headers.first(name: "Authorization") == "Basic YWxpY2U6c2VjcmV0")
        #expect(headers.first(name: "Cookie") == "SyncGatewaySession=xyz")
        #expect(headers.first(name: "X-Forwarded-For") == "127.0.0.1")
        #expect(headers.first(name: "Sec-WebSocket-Extensions") == nil)
        let opened = try await harness.recorder.first { if case .sessionOpened = $0 { true } else { false } }
        if case .sessionOpened(let info) = opened {
            #expect(info.user == "alice")
            #expect(info.database == "db")
        }
        try await client.close()
        try await harness.shutdown()
    }

    @Test(arguments: [
        (HTTPResponseStatus.unauthorized, "WWW-Authenticate", "Basic realm=\"SG\"", "Login required"),
        (.forbidden, "X-Correlation-ID", "c1", "forbidden"),
        (.notFound, "X-Correlation-ID", "c2", "no such database"),
        (.internalServerError, "Content-Type", "text/plain", "I only speak BLIP_3+CBMobile_2 protocols"),
        (.serviceUnavailable, "Retry-After", "5", "database going away"),
    ])
    func upstreamRefusalsPassThrough(status: HTTPResponseStatus, header: String, value: String, text: String) async throws {
        let harness = try await RelayHarness.start(upstream: { config in
            config.decide = { _ in .refuse(status: status, headers: [header: value], body: text) }
        })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.0 == status)
        #expect(refused.1.first(name: header) == value)
        #expect(refused.2 == text)
        try await harness.shutdown()
    }

    @Test func unreachableUpstreamIs502() async throws {
        let closed = try ClosedPort()
        let harness = try await RelayHarness.start(relay: { config in
            config.upstream = .single(UpstreamURL("ws://127.0.0.1:\(closed.port)")!)
        })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.0 == .badGateway)
        try await harness.shutdown()
        withExtendedLifetime(closed) {}
    }

    @Test func silentUpstreamIs504() async throws {
        let harness = try await RelayHarness.start(upstream: { config in config.decide = { _ in .hang } },
                                                   relay: { config in config.upstreamHandshakeTimeout = .milliseconds(200) })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.0 == .gatewayTimeout)
        try await harness.shutdown()
    }

    @Test func perDatabaseRouting() async throws {
        let harness = try await RelayHarness.start(relay: { config in
            config.upstream = UpstreamRouting(default: nil, perDatabase: ["db": config.upstream.defaultUpstream!])
        })
        let other = try #require(refusal(try await harness.connect(path: "/other/_blipsync")))
        #expect(other.0 == .notFound)
        let client = try #require(try await harness.connect().connection)
        try await client.close()
        try await harness.shutdown()
    }
}

/// Headers seen by the upstream, shared with the test.
final class NIOLockedValueBoxHeaders: @unchecked Sendable {
    private let lock = NIOLock()
    private var headers: HTTPHeaders?
    func set(_ value: HTTPHeaders) { lock.withLock { headers = value } }
    func get() -> HTTPHeaders? { lock.withLock { headers } }
}
