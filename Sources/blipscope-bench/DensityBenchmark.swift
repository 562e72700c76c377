import BLIPCore
import BLIPNIO
import Foundation
import Gateway
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ReplicationNames
import Soak

/// `blipscope-bench density`: what an idle replication costs the relay. Opens `sessions`
/// continuous pulls through a `blipscope relay` child to the embedded gateway (in this process,
/// an empty database, so each pull is caught up at once: Sync Gateway's `null` changes), keeps
/// them idle with a WebSocket PING each every `pingSeconds` (Couchbase Lite's replicator
/// heartbeat is 300 s by default), and reports the relay's resident memory per session, its
/// descriptors, its CPU over an idle window and the time it took to open them all, then how
/// many are still open.
struct DensityBenchmark {
    var sessions = 1_000
    var pingSeconds = 300.0
    var idleSeconds = 60.0
    /// Handshakes in flight at once while opening.
    var openingWave = 64
    /// Added to `blipscope relay`'s arguments (`--admin 127.0.0.1:0`, `--capture DIR`).
    var relayArguments: [String] = []
    var relayBinary: String?

    func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var gatewayConfiguration = GatewayConfiguration(databases: [GatewayDatabase(name: "db")])
        gatewayConfiguration.port = 0
        gatewayConfiguration.logger = Logger(label: "bench.gateway") { _ in SwiftLogNoOpLogHandler() }
        let gateway = try await GatewayServer.start(gatewayConfiguration, group: group)
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-bench-density.log").path
        let relay = try RelayProcess(upstreamPort: gateway.port, logFile: log, extraArguments: relayArguments,
                                     binary: relayBinary)
        let probe = ProcessProbe(pid: relay.process.processIdentifier)
        print(BenchMachine.current().line)
        print("density bench: \(sessions) continuous pulls, caught up, a PING each every \(Int(pingSeconds)) s; relay :\(relay.port) \(relayArguments.joined(separator: " ")), log \(log)")
        let before = (rss: probe.rssKiB() ?? 0, descriptors: probe.openDescriptors() ?? 0)

        let caughtUp = CaughtUpCount()
        let clock = ContinuousClock()
        let opening = clock.now
        var connections: [BLIPConnection] = []
        connections.reserveCapacity(sessions)
        let relayPort = relay.port
        while connections.count < sessions {
            let wave = min(openingWave, sessions - connections.count)
            connections += try await withThrowingTaskGroup(of: BLIPConnection.self) { tasks in
                for _ in 0..<wave { tasks.addTask { try await Self.pull(port: relayPort, group: group, caughtUp: caughtUp) } }
                return try await tasks.reduce(into: []) { $0.append($1) }
            }
        }
        guard await caughtUp.wait(for: sessions, within: .seconds(600)) else {
            throw BenchFailure("\(caughtUp.value) of \(sessions) pulls caught up within 600 s")
        }
        let openSeconds = Self.seconds(clock.now - opening)
        let open = (rss: probe.rssKiB() ?? 0, descriptors: probe.openDescriptors() ?? 0)

        let pings = connections.map { connection in
            connection.channel.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(Int64(pingSeconds)), delay: .seconds(Int64(pingSeconds))) { _ in
                connection.ping()
            }
        }
        let cpuBefore = relay.cpuSeconds
        try await Task.sleep(for: .seconds(idleSeconds))
        let idleCPU = relay.cpuSeconds - cpuBefore
        let idle = (rss: probe.rssKiB() ?? 0, descriptors: probe.openDescriptors() ?? 0)
        for ping in pings { ping.cancel() }
        let alive = connections.filter { $0.channel.isActive }.count

        let perSession = { (rss: Int) in Double(rss - before.rss) * 1024 / Double(sessions) / 1000 }
        print("relay RSS: \(before.rss / 1024) MiB before, \(open.rss / 1024) MiB with all open, \(idle.rss / 1024) MiB after the idle window")
        print(String(format: "per session: %.1f kB open, %.1f kB after %.0f s idle", perSession(open.rss), perSession(idle.rss), idleSeconds))
        print("descriptors: \(before.descriptors) before, \(open.descriptors) with all open (\(String(format: "%.2f", Double(open.descriptors - before.descriptors) / Double(sessions))) per session)")
        print(String(format: "opened and caught up in %.1f s (%.0f sessions/s)", openSeconds, Double(sessions) / openSeconds))
        print(String(format: "idle CPU: %.3f s over %.0f s = %.2f %% of a core", idleCPU, idleSeconds, idleCPU / idleSeconds * 100))
        print("alive after the idle window: \(alive) of \(sessions)")

        for connection in connections { try? await connection.close() }
        relay.stop()
        try await gateway.stop()
        try await group.shutdownGracefully()
        if alive < sessions { throw BenchFailure("\(sessions - alive) sessions closed while idle") }
    }

    /// One continuous pull through the relay: subChanges, then answered changes until the
    /// caught-up one (`null`, noReply) is counted.
    private static func pull(port: Int, group: EventLoopGroup, caughtUp: CaughtUpCount) async throws -> BLIPConnection {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = port
        configuration.path = "/db/_blipsync"
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        configuration.onRequest = { request, handler in
            guard request.profile == ReplicationProfile.changes.rawValue else { return }
            if String(buffer: request.body) == "null" { caughtUp.add() }
            if !request.isNoReply { handler.sendReply(.reply(to: request)) }
        }
        guard let connection = try await BLIPWebSocketClient.connect(configuration, group: group).connection else {
            throw BenchFailure("the relay refused a session")
        }
        _ = try await connection.send(.request(profile: ReplicationProfile.subChanges.rawValue,
                                               properties: Properties([.continuous: "true", .batch: "200"])))
        return connection
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Pulls caught up so far, with a bounded wait for a number of them.
final class CaughtUpCount: Sendable {
    private let count = NIOLockedValueBox(0)

    func add() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }

    /// Polls every 50 ms until `target` have caught up; false if the time ran out first.
    func wait(for target: Int, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while value < target {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }
}
