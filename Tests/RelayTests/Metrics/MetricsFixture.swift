import BLIPCore
import BLIPNIO
import Foundation
import Metrics
import NIOCore
import Prometheus
@testable import Relay

/// A relay with a ``MetricsObserver`` on a private Prometheus registry, its ``AdminServer`` on a
/// free loopback port, and replication-shaped traffic to run through it.
struct MetricsFixture {
    let harness: RelayHarness
    let registry: PrometheusCollectorRegistry
    let observer: MetricsObserver
    let admin: AdminServer
    let adminPort: Int

    static func start(token: String? = nil, adminTLS: BLIPServerTLS? = nil,
                      upstream configureUpstream: (inout BLIPWebSocketServer.Configuration) -> Void = { _ in },
                      relay configureRelay: (inout RelayConfiguration) -> Void = { _ in }) async throws -> MetricsFixture {
        let registry = PrometheusCollectorRegistry()
        let factory = RelayMetricsFactory(registry: registry, durationBuckets: [.milliseconds(1), .milliseconds(5),
                                                                               .milliseconds(25), .milliseconds(100), .seconds(1)])
        let observer = MetricsObserver(metrics: RelayMetrics(userLabels: true, factory: factory))
        let harness = try await RelayHarness.start(upstream: { upstream in
            upstream.onRequest = replicationPeer
            configureUpstream(&upstream)
        }, relay: configureRelay,
                                                   observers: [observer])
        let admin = AdminServer(configuration: AdminConfiguration(host: "127.0.0.1", port: 0, bearerToken: token, tls: adminTLS),
                                group: harness.group, relay: harness.relay, observer: observer,
                                metricsText: { registry.emitToBuffer() })
        let address = try await admin.start()
        return MetricsFixture(harness: harness, registry: registry, observer: observer, admin: admin,
                              adminPort: address.port!)
    }

    /// Echoes, but answers `Conflict` requests with HTTP 409 and `Fail` ones with HTTP 404, and
    /// never answers `Hang` ones.
    static let replicationPeer: @Sendable (BLIPMessage, BLIPChannelHandler) -> Void = { request, handler in
        if request.properties["Hang"] != nil {
            return  // never answered: the analyzer's unansweredRequest
        } else if request.properties["Conflict"] != nil {
            handler.sendReply(.error(to: request.number, domain: "HTTP", code: 409, message: "conflict"))
        } else {
            RelayHarness.echo(request, handler)
        }
    }

    /// One client session of changes, revs (one a tombstone), a 404 and a 409.
    /// `inspected`: waits until the relay inspected the last reply (a relay that decodes).
    func replicate(client: BLIPConnection, inspected: Bool = true) async throws {
        let changes = #"[[1,"doc1","1-a"],[2,"doc2","1-b"],[3,"doc3","1-c"]]"#
        let requests: [BLIPMessage] = [
            .request(profile: "getCheckpoint", properties: ["client": "c1"]),
            .request(profile: "changes", body: body(changes)),
            .request(profile: "rev", properties: ["id": "doc1", "rev": "1-a", "sequence": "1"], body: body(#"{"v":1}"#)),
            .request(profile: "rev", properties: ["id": "doc2", "rev": "2-b", "deleted": "1", "sequence": "2",
                                                  "history": "1-b"], body: body("{}")),
            .request(profile: "rev", properties: ["id": "doc3", "rev": "1-c", "Conflict": "1"], body: body("{}")),
            .request(profile: "getAttachment", properties: ["digest": "sha1-x", "Fail": "1"]),
            .request(profile: "myCustomProfile"),
        ]
        for request in requests {
            _ = try await withTimeout { try await client.request(request) }
        }
        // Inspection may wait a few milliseconds after forwarding (RelayLimits.inspectionDelay):
        // the last reply seen by the recorder, which observes after the metrics observer, means
        // every message was counted.
        guard inspected else { return }
        let last = MessageNumber(requests.count)
        _ = try await harness.recorder.first {
            if case .message(let event) = $0 { event.direction == .serverToClient && event.message.number == last } else { false }
        }
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> (status: Int, body: String) {
        try await httpGet(port: adminPort, path: path, headers: headers, group: harness.group)
    }

    func shutdown() async throws {
        try await admin.shutdown()
        try await harness.shutdown()
    }

    /// Metric family names in a scrape (from its `# TYPE` lines).
    static func families(in scrape: String) -> Set<String> {
        Set(scrape.split(separator: "\n").compactMap { line in
            line.hasPrefix("# TYPE ") ? line.split(separator: " ").dropFirst(2).first.map(String.init) : nil
        })
    }

    /// The value of the sample whose line starts with `prefix` (name and labels), summed if several;
    /// nil when the scrape has no such sample (so that `== 0` does not pass on a missing metric).
    static func value(_ prefix: String, in scrape: String) -> Double? {
        let values = scrape.split(separator: "\n").filter { $0.hasPrefix(prefix) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    /// Repository root (for `dashboards/`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `blipscope_…` names referenced by a file, with histogram suffixes removed.
    static func referencedNames(in file: String) throws -> Set<String> {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)
        let regex = try NSRegularExpression(pattern: "blipscope_[a-z_]+")
        let range = NSRange(text.startIndex..., in: text)
        return Set(regex.matches(in: text, range: range).compactMap { match in
            Range(match.range, in: text).map { name in
                var name = String(text[name])
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
                return name
            }
        })
    }

    /// Path of an executable on PATH, or nil.
    static func executable(_ name: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
