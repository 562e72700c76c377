import BLIPTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import Relay

/// Checks against the real Prometheus tools (Debian's `prometheus` package, installed by the
/// Makefile); skipped when they are absent.
@Suite struct PrometheusToolTests {
    static let promtool = MetricsFixture.executable("promtool")
    static let prometheus = MetricsFixture.executable("prometheus")

    @Test(.enabled(if: promtool != nil, "promtool is not installed: `make test` installs Debian's prometheus"))
    func promtoolAcceptsRulesAndScrape() async throws {
        let rules = MetricsFixture.packageRoot.appendingPathComponent("dashboards/alerts.yml").path
        let checked = try await run(Self.promtool!, ["check", "rules", rules])
        #expect(checked.status == 0, "\(checked.output)")

        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        let scrape = try await fixture.get("/metrics").body
        try await client.close()
        try await fixture.shutdown()
        let lint = try await run(Self.promtool!, ["check", "metrics"], input: scrape)
        // Every metric has HELP text (RelayMetricsFactory), so promtool finds no problem at all.
        #expect(lint.status == 0, "\(lint.output)")
        #expect(!lint.output.contains("no help text"), "\(lint.output)")
        #expect(scrape.contains("# HELP blipscope_messages_total "))
    }

    @Test(.enabled(if: prometheus != nil, "prometheus is not installed: `make test` installs Debian's prometheus"))
    func prometheusScrapesTheRelayDuringReplication() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-prom-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: blipscope
                static_configs:
                  - targets: ["127.0.0.1:\(fixture.adminPort)"]
            """
        try config.write(to: directory.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        let port = try await freePort(group: fixture.harness.group)
        let server = try RunningCommand(executable: Self.prometheus!, arguments: [
            "--config.file=\(directory.path)/prometheus.yml", "--storage.tsdb.path=\(directory.path)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ])
        defer { server.kill() }

        let group = fixture.harness.group
        func query(_ promql: String) async -> Double? {
            let encoded = promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? promql
            guard let answer = try? await httpGet(port: port, path: "/api/v1/query?query=\(encoded)", group: group),
                  answer.status == 200,
                  let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                  let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
                  let value = result.first?["value"] as? [Any], let text = value.last as? String
            else { return nil }
            return Double(text)
        }
        let messages = "sum(blipscope_messages_total)"
        let latency = #"sum(blipscope_request_duration_seconds_count{profile="rev"})"#
        let buckets = "count(blipscope_request_duration_seconds_bucket)"
        // Prometheus starting and its first scrapes on a loaded machine: the loop ends as soon as
        // all three answers are in.
        let deadline = ContinuousClock.now + .seconds(300)
        var seen: (Double?, Double?, Double?) = (nil, nil, nil)
        while ContinuousClock.now < deadline {
            seen = (await query(messages), await query(latency), await query(buckets))
            if let m = seen.0, m > 0, let l = seen.1, l > 0, let b = seen.2, b > 0 { break }
            try await Task.sleep(for: .milliseconds(250))  // polling another process, bounded by the deadline
        }
        #expect((seen.0 ?? 0) >= 12, "messages: \(String(describing: seen.0))")
        #expect((seen.1 ?? 0) == 3, "rev latency count: \(String(describing: seen.1))")
        #expect((seen.2 ?? 0) > 0, "latency buckets: \(String(describing: seen.2))")
        try await client.close()
        try await fixture.shutdown()
    }

    /// Runs a tool to its end: its status and what it wrote (standard output, then error).
    private func run(_ path: String, _ arguments: [String], input: String? = nil) async throws -> (status: Int32, output: String) {
        let result = try await RunningCommand.run(path, arguments, input: input.map { Array($0.utf8) })
        return (result.status, result.output + result.errors)
    }

    /// A loopback port nothing listens on right now.
    private func freePort(group: any EventLoopGroup) async throws -> Int {
        let channel = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}
