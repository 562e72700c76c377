import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import Logging
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import Testing
import WebView
@testable import Relay

/// A relay in front of several upstream nodes (embedded gateways or scripted upstreams) on
/// loopback, with its metrics on a private registry behind an admin listener, and its log lines
/// kept so a test can wait for one.
struct NodesFixture {
    let group: MultiThreadedEventLoopGroup
    let relay: RelayServer
    let relayPort: Int
    let recorder: RecordingObserver
    let log: EventLog<String>
    let registry: PrometheusCollectorRegistry
    let admin: AdminServer
    let adminPort: Int

    /// A swift-log handler whose lines go to an ``EventLog``.
    struct LineLog: LogHandler {
        let lines: EventLog<String>
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.append("\(event.level) \(event.message)") }
    }

    /// `checks`: nil interval (no background checks) unless a test is about them.
    static func start(nodes urls: [UpstreamURL], checks: UpstreamHealthChecks = UpstreamHealthChecks(),
                      group: MultiThreadedEventLoopGroup,
                      configure: (inout RelayConfiguration) -> Void = { _ in }) async throws -> NodesFixture {
        let registry = PrometheusCollectorRegistry()
        let factory = RelayMetricsFactory(registry: registry, durationBuckets: [.milliseconds(10), .seconds(1)])
        let observer = MetricsObserver(metrics: RelayMetrics(factory: factory))
        var configuration = RelayConfiguration(upstream: UpstreamRouting(defaultNodes: urls))
        configuration.listenPort = 0
        configuration.upstreamChecks = checks
        configuration.clientHandshakeTimeout = .seconds(120)
        configuration.upstreamHandshakeTimeout = .seconds(60)
        configure(&configuration)
        let recorder = RecordingObserver(interests: .sessions)
        let log = EventLog<String>()
        let history = SessionHistory()
        // The history before the recorder: once the recorder has seen an open, the web view has it.
        let relay = RelayServer(configuration: configuration, group: group,
                                logger: Logger(label: "nodes-test") { _ in LineLog(lines: log) },
                                observers: [observer, HistoryObserver(history: history), recorder])
        let address = try await relay.start()
        let admin = AdminServer(configuration: AdminConfiguration(host: "127.0.0.1", port: 0), group: group, relay: relay,
                                observer: observer, web: WebAPI(history: history, now: HistoryObserver.now),
                                metricsText: { registry.emitToBuffer() })
        let adminAddress = try await admin.start()
        return NodesFixture(group: group, relay: relay, relayPort: address.port!, recorder: recorder, log: log,
                            registry: registry, admin: admin, adminPort: adminAddress.port!)
    }

    /// An embedded gateway serving `db` on a free loopback port (or `port`), users optional.
    static func gateway(port: Int = 0, users: [String: String] = [:], group: EventLoopGroup) async throws -> GatewayServer {
        var configuration = GatewayConfiguration(databases: [GatewayDatabase(name: "db")])
        configuration.port = port
        configuration.users = users
        configuration.logger = Logger(label: "gateway") { _ in SwiftLogNoOpLogHandler() }
        return try await GatewayServer.start(configuration, group: group)
    }

    static func url(_ port: Int) -> UpstreamURL { UpstreamURL(secure: false, host: "127.0.0.1", port: port) }

    /// A client's handshake through the relay to `db`.
    func connect(headers: HTTPHeaders = [:]) async throws -> BLIPWebSocketClient.Outcome {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = relayPort
        configuration.path = "/db/_blipsync"
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        configuration.headers = headers
        let frozen = configuration, group = self.group
        return try await withTimeout { try await BLIPWebSocketClient.connect(frozen, group: group) }
    }

    /// A client connected through the relay, and the node its session went to (from the open
    /// event of the session with the client's port).
    func connected() async throws -> (client: BLIPConnection, node: UpstreamNode) {
        let outcome = try await connect()
        let client = try #require(outcome.connection, "the client got \(outcome)")
        let port = try #require(client.channel.localAddress?.port)
        let node = try await recorder.first(extracting: { event -> UpstreamNode? in
            guard case .sessionOpened(let info) = event, info.clientPort == port else { return nil }
            return info.node
        })
        return (client, node)
    }

    /// Waits (bounded) until `condition` holds of the relay's nodes, polling their state.
    func until(within seconds: Double = 60, _ what: String,
               _ condition: @escaping @Sendable ([UpstreamPool.NodeState]) -> Bool) async throws {
        let balancer = try #require(relay.balancer)
        do {
            try await withTimeout(seconds) {
                while !condition(balancer.nodes) { try await Task.sleep(for: .milliseconds(5)) }
            }
        } catch {
            Issue.record("never: \(what); nodes \(balancer.nodes)")
            throw error
        }
    }

    /// The first log line (past or future) containing `text`.
    func logLine(containing text: String, within seconds: Double = 60) async throws -> String {
        try await log.first(within: seconds) { _, line in line.contains(text) }
    }

    func get(_ path: String) async throws -> (status: Int, body: String) {
        try await httpGet(port: adminPort, path: path, group: group)
    }

    /// A scrape's value of `series` (an exact series, labels included).
    func metric(_ series: String) async throws -> Double? {
        MetricsFixture.value(series, in: try await get("/metrics").body)
    }

    func shutdown() async throws {
        try await admin.shutdown()
        try await relay.shutdown()
    }
}
