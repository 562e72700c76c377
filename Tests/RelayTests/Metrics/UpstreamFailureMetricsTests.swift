import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOHTTP1
import Prometheus
import Testing
@testable import Relay

/// `blipscope_upstream_connect_failures_total{reason}` names how the dial failed, carried from the
/// failure itself: the HTTP status the client gets says nothing of it (an upstream's own 502 is a
/// refusal, the relay's 502 an unreachable upstream).
@Suite struct UpstreamFailureMetricsTests {
    /// A relay whose metrics go to a private registry; the upstream as `configureUpstream` says.
    static func relay(upstream configureUpstream: (inout BLIPWebSocketServer.Configuration) -> Void = { _ in },
                      relay configureRelay: (inout RelayConfiguration) -> Void = { _ in })
        async throws -> (harness: RelayHarness, registry: PrometheusCollectorRegistry) {
        let registry = PrometheusCollectorRegistry()
        let factory = RelayMetricsFactory(registry: registry, durationBuckets: [.milliseconds(1), .seconds(1)])
        let observer = MetricsObserver(metrics: RelayMetrics(userLabels: false, factory: factory))
        let harness = try await RelayHarness.start(upstream: configureUpstream, relay: configureRelay, observers: [observer])
        return (harness, registry)
    }

    static func failures(_ registry: PrometheusCollectorRegistry) -> [String: Double] {
        let scrape = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        var counts: [String: Double] = [:]
        for reason in UpstreamFailure.allCases {
            let prefix = #"blipscope_upstream_connect_failures_total{reason="\#(reason.rawValue)"}"#
            // Each reason's series exists from the first failure on; those still at 0 are left out.
            if let value = MetricsFixture.value(prefix, in: scrape), value > 0 { counts[reason.rawValue] = value }
        }
        return counts
    }

    @Test(arguments: [HTTPResponseStatus.badGateway, .serviceUnavailable, .unauthorized])
    func anUpstreamsOwnRefusalCountsAsRefused(status: HTTPResponseStatus) async throws {
        let (harness, registry) = try await Self.relay(upstream: { config in
            config.decide = { _ in .refuse(status: status, headers: [:], body: "no") }
        })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.status == status)
        #expect(Self.failures(registry) == ["refused": 1])
        try await harness.shutdown()
    }

    @Test func anUpstreamNobodyListensOnCountsAsUnreachable() async throws {
        let closed = try ClosedPort()
        let (harness, registry) = try await Self.relay(relay: { config in
            config.upstream = .single(UpstreamURL("ws://127.0.0.1:\(closed.port)")!)
        })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.status == .badGateway)
        #expect(Self.failures(registry) == ["unreachable": 1])
        try await harness.shutdown()
        withExtendedLifetime(closed) {}
    }

    @Test func anUpstreamThatNeverAnswersCountsAsTimeout() async throws {
        let (harness, registry) = try await Self.relay(upstream: { config in config.decide = { _ in .hang } },
                                                       relay: { config in config.upstreamHandshakeTimeout = .milliseconds(200) })
        let refused = try #require(refusal(try await harness.connect()))
        #expect(refused.status == .gatewayTimeout)
        #expect(Self.failures(registry) == ["timeout": 1])
        try await harness.shutdown()
    }

    @Test func aRefusalOfTheRelaysOwnIsNoUpstreamFailure() async throws {
        let (harness, registry) = try await Self.relay()
        let refused = try #require(refusal(try await harness.connect(path: "/nowhere")))
        #expect(refused.status == .notFound)
        #expect(Self.failures(registry).isEmpty)
        try await harness.shutdown()
    }
}
