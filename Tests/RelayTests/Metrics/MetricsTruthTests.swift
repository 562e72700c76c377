import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import Policy
import Prometheus
import Testing
@testable import Relay

/// Real traffic through a relay with metrics, a capture and a policy (a rate limit, an
/// `errorReply` fault and a deny): every metric this traffic should move has moved, each
/// verdict under the action the rule really took.
@Suite struct MetricsTruthTests {
    /// The value of the one sample line that starts with `prefix`; nil when there is none.
    static func sample(_ prefix: String, in scrape: String) -> Double? {
        let values = scrape.split(separator: "\n").filter { $0.hasPrefix(prefix) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    @Test func verdictsCaptureAndRateLimitDelaysAreCountedAsTheyHappened() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-truth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy = """
            rules:
              - name: slow
                match: { from: client, type: request, profile: limited }
                action: { rateLimit: { perSecond: 50, burst: 1, key: session, onExceed: delay } }
              - name: flaky
                match: { from: client, type: request, profile: flaky }
                action: { errorReply: { code: 503, message: "try again" } }
              - name: no-secrets
                match: { from: client, type: request, profile: secret }
                action: { deny: { code: 403, message: "no" } }
            """
        let registry = PrometheusCollectorRegistry()
        let factory = RelayMetricsFactory(registry: registry, durationBuckets: [.milliseconds(1), .milliseconds(100), .seconds(1)])
        let metrics = MetricsObserver(metrics: RelayMetrics(userLabels: false, factory: factory))
        let store = PolicyStore(document: try PolicyDocument(yaml: policy))
        let harness = try await RelayHarness.start(relay: { configuration in
            configuration.policy = store
            configuration.captureDirectory = directory.path
            configuration.policyClock = { 0 }  // the bucket never refills: every request after the first waits
        }, observers: [metrics])
        let client = try await harness.connected()
        var pending: [EventLoopFuture<BLIPMessage>] = []
        for profile in ["limited", "limited", "limited", "flaky", "secret", "echo"] {
            pending.append(try await client.send(.request(profile: profile, body: body(profile))))
        }
        let answers = try await replies(to: pending)
        #expect(answers.map { $0.properties["Error-Code"] } == [nil, nil, nil, "503", "403", nil])
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        try await harness.shutdown()  // the capture is written out and reported before this returns

        let scrape = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(Self.sample(#"blipscope_policy_verdicts_total{rule="flaky",action="fault"}"#, in: scrape) == 1)
        #expect(Self.sample(#"blipscope_policy_verdicts_total{rule="flaky",action="deny"}"#, in: scrape) == nil,
                "an errorReply is a fault, not a deny")
        #expect(Self.sample(#"blipscope_policy_verdicts_total{rule="no-secrets",action="deny"}"#, in: scrape) == 1)
        let delayed = try #require(Self.sample(#"blipscope_policy_verdicts_total{rule="slow",action="delay"}"#, in: scrape))
        #expect(delayed == 2, "a burst of one holds the two later requests")
        #expect(Self.sample(#"blipscope_rate_limit_delay_seconds_count{rule="slow"}"#, in: scrape) == delayed)
        #expect((Self.sample("blipscope_capture_records_total", in: scrape) ?? 0) > 10)
        #expect((Self.sample("blipscope_capture_bytes_total", in: scrape) ?? 0) > 500)
        #expect(Self.sample("blipscope_capture_dropped_total", in: scrape) == 0)
    }
}
