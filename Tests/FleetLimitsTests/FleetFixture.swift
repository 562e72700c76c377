import BLIPCore
import BLIPNIO
import FleetLimits
import Foundation
import Gateway
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Policy
import Prometheus
import RedisClient
import Relay

/// Relays in front of one embedded gateway, each with its own Redis client, fleet limiter,
/// policy state and metrics, as separate processes would have: a fleet on loopback.
final class FleetFixture: Sendable {
    struct Member: Sendable {
        let relay: RelayServer
        let port: Int
        let limiter: FleetLimiter
        let redis: RedisClient
        let log: LogLines
        let registry: PrometheusCollectorRegistry
    }

    let group: MultiThreadedEventLoopGroup
    let gateway: GatewayServer
    let members: [Member]

    private init(group: MultiThreadedEventLoopGroup, gateway: GatewayServer, members: [Member]) {
        self.group = group
        self.gateway = gateway
        self.members = members
    }

    /// Heartbeats every 250 ms (the fleet converges within the test's waits), and a relay
    /// counts as live for 5 s, so a heartbeat a busy machine delays does not drop it from the
    /// live count; the Redis clients come back within half a second of a restart.
    /// Redis calls get 5 s, not 250 ms: on a machine busy with the rest of the suite (and six
    /// spinning processes, `make test-loaded`) a draw may well take longer than the relay's
    /// default, even 2 s, and a fallback the test did not cause would be counted and logged.
    static func configuration(relay index: Int) -> FleetLimitsConfiguration {
        var configuration = FleetLimitsConfiguration(relayID: "relay-\(index)")
        configuration.heartbeatInterval = 250_000_000
        configuration.relayTTL = 5_000_000_000
        configuration.redisTimeout = 5_000_000_000
        return configuration
    }

    static func with(relays count: Int, redisURL: String, policy yaml: String,
                     _ body: @Sendable (FleetFixture) async throws -> Void) async throws {
        let document = try PolicyDocument(yaml: yaml)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var gatewayConfiguration = GatewayConfiguration(databases: [GatewayDatabase(name: "db")])
        gatewayConfiguration.port = 0
        let gateway = try await GatewayServer.start(gatewayConfiguration, group: group)
        var members: [Member] = []
        for index in 0..<count {
            var redisConfiguration = try RedisConfiguration(url: redisURL)
            let fleetConfiguration = configuration(relay: index)
            redisConfiguration.limits.commandTimeout = .nanoseconds(Int64(fleetConfiguration.redisTimeout))
            redisConfiguration.backoff = RedisBackoff(initialDelay: .milliseconds(50), maxDelay: .milliseconds(500))
            let redis = try RedisClient(configuration: redisConfiguration, eventLoop: group.next(),
                                        logger: Logger(label: "test.redis") { _ in SwiftLogNoOpLogHandler() })
            redis.start()
            let log = LogLines()
            let registry = PrometheusCollectorRegistry()
            let metrics = RelayMetrics(factory: RelayMetricsFactory(registry: registry, durationBuckets: [.milliseconds(1)]))
            let limiter = FleetLimiter(configuration: fleetConfiguration, redis: redis, eventLoop: group.next(),
                                       logger: Logger(label: "test.fleet") { _ in LogLines.Handler(lines: log) },
                                       report: { change in metrics.fleetLimits(degraded: change != .shared) })
            limiter.start()
            var relayConfiguration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: gateway.port)))
            relayConfiguration.listenPort = 0
            relayConfiguration.clientHandshakeTimeout = .seconds(120)
            relayConfiguration.upstreamHandshakeTimeout = .seconds(120)
            relayConfiguration.policy = PolicyStore(document: document, state: PolicyState(fleet: limiter, fleetSessions: limiter))
            var logger = Logger(label: "test.relay")
            logger.logLevel = .error
            let relay = RelayServer(configuration: relayConfiguration, group: group, logger: logger)
            let address = try await relay.start()
            members.append(Member(relay: relay, port: address.port!, limiter: limiter, redis: redis, log: log, registry: registry))
        }
        let fixture = FleetFixture(group: group, gateway: gateway, members: members)
        do {
            try await body(fixture)
        } catch {
            await fixture.shutdown()
            throw error
        }
        await fixture.shutdown()
    }

    private func shutdown() async {
        for member in members {
            member.limiter.stop()
            try? await member.relay.shutdown()
            await member.redis.shutdown()
        }
        try? await gateway.stop()
        try? await group.shutdownGracefully()
    }

    /// Waits until every relay's fleet limits satisfy `predicate` (checked at each change).
    func waitForAll(within timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable (FleetSnapshot) -> Bool) async -> Bool {
        for member in members where !(await member.limiter.wait(within: timeout, until: predicate)) { return false }
        return true
    }

    /// A BLIP client of `user` (Basic auth) through relay `index`; nil with the refusal's status.
    func connect(user: String, relay index: Int) async throws -> (BLIPConnection?, HTTPResponseStatus?) {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = members[index].port
        configuration.path = "/db/_blipsync"
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        let token = Data("\(user):secret".utf8).base64EncodedString()
        configuration.headers.add(name: "Authorization", value: "Basic \(token)")
        switch try await BLIPWebSocketClient.connect(configuration, group: group) {
        case .connected(let connection): return (connection, nil)
        case .refused(let status, _, _): return (nil, status)
        }
    }

    func scrape(_ index: Int) -> String { members[index].registry.emitToString() }
}

/// Log messages of one relay's fleet limiter.
final class LogLines: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var all: [String] { lines.withLockedValue { $0 } }
    func count(containing text: String) -> Int { all.filter { $0.contains(text) }.count }

    struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.lines.withLockedValue { $0.append(event.message.description) } }
    }
}
