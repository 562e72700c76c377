import BLIPCore
import Foundation
import MetricCatalog
import NIOCore
import Testing
@testable import Relay

@Suite struct MetricsTests {
    @Test func scrapeAfterTrafficHasTheSeries() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        let sessions = try await fixture.get("/sessions")
        #expect(sessions.status == 200)
        #expect(sessions.body.contains("\"database\":\"db\""))
        #expect(sessions.body.contains("\"messagesFromClient\":7"))
        let id = try #require(fixture.observer.liveTracks().first?.info.id)
        let detail = try await fixture.get("/sessions/\(id)")
        #expect(detail.status == 200)
        #expect(detail.body.contains("\"timeline\""))
        #expect(detail.body.contains("\"summary\""))
        #expect(try await fixture.get("/sessions/999999").status == 404)
        #expect(try await fixture.get("/healthz").status == 200)
        #expect(try await fixture.get("/readyz").status == 200)
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()

        let (status, scrape) = try await fixture.get("/metrics")
        #expect(status == 200)
        func value(_ prefix: String) -> Double? { MetricsFixture.value(prefix, in: scrape) }
        #expect(value(#"blipscope_messages_total{direction="client_to_upstream",type="request",profile="rev"}"#) == 3)
        #expect(value(#"blipscope_messages_total{direction="client_to_upstream",type="request",profile="other"}"#) == 1)
        #expect(value(#"blipscope_messages_total{direction="upstream_to_client",type="error",profile="rev"}"#) == 1)
        #expect(value(#"blipscope_request_duration_seconds_count{profile="rev"}"#) == 3)
        #expect(value(#"blipscope_documents_total{direction="client_to_upstream"}"#) == 3)
        #expect(value(#"blipscope_revisions_total{direction="client_to_upstream"}"#) == 3)
        #expect(value(#"blipscope_tombstones_total{direction="client_to_upstream"}"#) == 1)
        #expect(value(#"blipscope_conflicts_total{profile="rev"}"#) == 1)
        #expect(value(#"blipscope_error_replies_total{profile="getAttachment",domain="HTTP",code="404"}"#) == 1)
        #expect(value(#"blipscope_handshakes_total{status="101"}"#) == 1)
        #expect(value("blipscope_upstream_connect_seconds_count") == 1)
        #expect(value(#"blipscope_sessions_total{database="db""#) == 1)
        #expect(value(#"blipscope_sessions_active{database="db""#) == 0)
        #expect(value(#"blipscope_sessions_closed_total{database="db",close_reason="client_normal"}"#) == 1)
        #expect((value(#"blipscope_frames_total{direction="client_to_upstream"}"#) ?? 0) >= 7)
        #expect((value(#"blipscope_wire_bytes_total{direction="upstream_to_client"}"#) ?? 0) > 0)
        #expect(value(#"blipscope_user_messages_total{user="anonymous",direction="client_to_upstream"}"#) == 7)
        #expect(!scrape.contains("doc1"))
        try await fixture.shutdown()
    }

    /// `relay --no-decode`: frames and their bytes are counted as they are forwarded; no message is.
    @Test func notDecodingCountsFramesAndBytesNotMessages() async throws {
        let fixture = try await MetricsFixture.start(relay: { $0.decodes = false })
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client, inspected: false)
        let sessions = try await fixture.get("/sessions")
        #expect(sessions.body.contains("\"messagesFromClient\":0"), "\(sessions.body)")
        #expect(!sessions.body.contains("\"bytesFromClient\":0,"), "\(sessions.body)")
        try await client.close()
        let summary = try await fixture.harness.recorder.sessionClosed()

        let scrape = try await fixture.get("/metrics").body
        func value(_ prefix: String) -> Double? { MetricsFixture.value(prefix, in: scrape) }
        // Each request and each reply one frame; bytes: the frames' payloads, as the session counted them.
        #expect(value(#"blipscope_frames_total{direction="client_to_upstream"}"#) == 7)
        #expect(value(#"blipscope_frames_total{direction="upstream_to_client"}"#) == 7)
        let headers = 2 * 7  // a short frame's WebSocket header: 2 bytes, plus its 4-byte mask from the client
        #expect(value(#"blipscope_wire_bytes_total{direction="client_to_upstream"}"#)
                == Double(summary.statistics.bytesForwarded[0] - headers - 4 * 7))
        #expect(value(#"blipscope_wire_bytes_total{direction="upstream_to_client"}"#)
                == Double(summary.statistics.bytesForwarded[1] - headers))
        #expect((value("blipscope_messages_total") ?? 0) == 0, "no message counted")
        #expect(value(#"blipscope_sessions_closed_total{database="db",close_reason="client_normal"}"#) == 1)
        try await fixture.shutdown()
    }

    @Test func dashboardAndRulesNameOnlyMetricsThatExist() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        let scrape = try await fixture.get("/metrics").body
        let families = MetricsFixture.families(in: scrape)
        let catalog = Set(MetricCatalog.all.map(\.name))
        #expect(catalog.isSubset(of: families), "missing: \(catalog.subtracting(families))")
        for file in ["dashboards/blipscope.json", "dashboards/alerts.yml"] {
            let names = try MetricsFixture.referencedNames(in: file)
            #expect(!names.isEmpty)
            #expect(names.isSubset(of: catalog), "\(file) names unknown metrics: \(names.subtracting(catalog))")
            #expect(names.isSubset(of: families), "\(file) names metrics absent from a scrape: \(names.subtracting(families))")
        }
        let dashboard = try JSONSerialization.jsonObject(with: Data(contentsOf: MetricsFixture.packageRoot
            .appendingPathComponent("dashboards/blipscope.json"))) as? [String: Any]
        #expect(dashboard?["uid"] as? String == "blipscope-relay")
        try await fixture.shutdown()
    }

    @Test func bearerTokenIsRequiredWhenSet() async throws {
        let fixture = try await MetricsFixture.start(token: "s3cret")
        #expect(try await fixture.get("/metrics").status == 401)
        #expect(try await fixture.get("/metrics", headers: [("Authorization", "Bearer wrong")]).status == 401)
        #expect(try await fixture.get("/metrics", headers: [("Authorization", "Bearer s3cret")]).status == 200)
        // The scheme's name is case-insensitive (RFC 7235 §2.1).
        #expect(try await fixture.get("/metrics", headers: [("Authorization", "bearer s3cret")]).status == 200)
        let refused = #expect(throws: RelayError.self) { try AdminConfiguration(host: "0.0.0.0", port: 0).validate() }
        #expect(refused?.code == "admin_token_required")
        try AdminConfiguration(host: "0.0.0.0", port: 0, bearerToken: "t").validate()
        try await fixture.shutdown()
    }

    /// The scrape is the catalog: each family's HELP and TYPE lines are its definition's, and
    /// every series carries exactly the definition's labels (a histogram's buckets add `le`).
    @Test func theScrapeIsWhatTheCatalogDefines() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        try await client.close()
        _ = try await fixture.harness.recorder.sessionClosed()
        let scrape = try await fixture.get("/metrics").body
        try await fixture.shutdown()
        var checked = Set<String>()
        for line in scrape.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                let definition = try #require(MetricCatalog.named(parts[2]), "\(parts[2]) is not in the catalog")
                #expect(parts[3] == (line.hasPrefix("# HELP ") ? definition.help : definition.kind.rawValue), "\(line)")
                continue
            }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let series = String(line.prefix { $0 != "{" && $0 != " " })
            var family = series
            for suffix in ["_bucket", "_sum", "_count"] where MetricCatalog.named(family) == nil && family.hasSuffix(suffix) {
                family = String(family.dropLast(suffix.count))
            }
            let definition = try #require(MetricCatalog.named(family), "\(series) is not in the catalog")
            var labels: [String] = []
            if let open = line.firstIndex(of: "{"), let close = line.firstIndex(of: "}") {
                labels = line[line.index(after: open)..<close].split(separator: ",").compactMap { $0.split(separator: "=").first.map(String.init) }
            }
            let expected = definition.labels + (series.hasSuffix("_bucket") && definition.kind == .histogram ? ["le"] : [])
            #expect(Set(labels) == Set(expected), "\(line)")
            checked.insert(family)
        }
        #expect(checked == Set(MetricCatalog.all.filter { !$0.optIn }.map(\.name)).union(checked.filter { MetricCatalog.named($0)?.optIn == true }),
                "every metric appears in the scrape")
        #expect(MetricCatalog.all.allSatisfy { !$0.help.isEmpty })
    }

    @Test func bearerTokenChecks() {
        let admin = AdminConfiguration(bearerToken: "s3cret")
        #expect(admin.authorizes("Bearer s3cret") && admin.authorizes("BEARER s3cret"))
        #expect(!admin.authorizes(nil) && !admin.authorizes("Bearer s3cre") && !admin.authorizes("Bearer s3cret2"))
        #expect(!admin.authorizes("Basic s3cret") && !admin.authorizes("s3cret"))
        #expect(AdminConfiguration().authorizes(nil))
    }

    @Test func theTokenComesFromTheArgumentTheFileOrTheEnvironment() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("admin-token-\(UInt32.random(in: 0 ... .max))")
        try "from-file\nignored\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let environment = ["BLIPSCOPE_ADMIN_TOKEN": "from-env"]
        #expect(try AdminConfiguration.token(argument: "from-arg", file: file.path, environment: environment) == "from-arg")
        #expect(try AdminConfiguration.token(argument: nil, file: file.path, environment: environment) == "from-file")
        #expect(try AdminConfiguration.token(argument: nil, file: nil, environment: environment) == "from-env")
        #expect(try AdminConfiguration.token(argument: nil, file: nil, environment: [:]) == nil)
        #expect(throws: RelayError.self) { try AdminConfiguration.token(argument: nil, file: "/nonexistent/token", environment: [:]) }
    }

    @Test func stuckPollReportsEveryReasonAndNoneForAHealthySession() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        try await fixture.replicate(client: client)
        fixture.observer.pollStuck()
        let scrape = try await fixture.get("/metrics").body
        // Written out, not read from the code under test: a reason dropped from it must fail here.
        let reasons = ["unansweredRequest", "revNeverArrived", "unansweredRev", "pausedOnAck", "notCaughtUp",
                       "revisionRefusedRepeatedly", "checkpointConflictLoop"]
        #expect(Set(StuckReasons.all) == Set(reasons))
        for reason in reasons {
            let series = #"blipscope_stuck_sessions{reason="\#(reason)"}"#
            #expect(scrape.contains(series + " "), "\(reason)")
            #expect(MetricsFixture.value(series, in: scrape) == 0, "\(reason)")
        }
        try await client.close()
        try await fixture.shutdown()
    }

    @Test func unansweredRequestCountsAsStuck() async throws {
        let fixture = try await MetricsFixture.start()
        let client = try await fixture.harness.connected()
        Task { _ = try? await client.request(.request(profile: "getCheckpoint", properties: ["client": "c", "Hang": "1"])) }
        _ = try await fixture.harness.recorder.first { event in
            if case .message(let message) = event { message.message.properties["Hang"] != nil } else { false }
        }
        fixture.observer.pollStuck(now: MetricsObserver.now() + 3600)  // an hour later, still no reply
        let scrape = try await fixture.get("/metrics").body
        #expect(MetricsFixture.value(#"blipscope_stuck_sessions{reason="unansweredRequest"}"#, in: scrape) == 1)
        let id = try #require(fixture.observer.liveTracks().first?.info.id)
        let detail = try await fixture.get("/sessions/\(id)").body
        #expect(detail.contains(#""profile":"getCheckpoint""#), "\(detail)")
        try await client.close()
        try await fixture.shutdown()
    }
}
