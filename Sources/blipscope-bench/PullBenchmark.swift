import CommandLineSupport
import Foundation
import Gateway
import Logging
import NIOCore
import NIOPosix
import Relay
import Replication

/// `blipscope-bench pull`: a one-shot pull of many small documents from the embedded gateway by
/// the embedded replicator, directly and through an in-process relay that decodes every message
/// and logs it (info level, text) to a file — documents per second each way and their ratio.
/// Everything shares one event-loop group sized to the machine, as in a single-process demo.
struct PullBenchmark {
    var documents = 10_000
    var rounds = 3
    /// Where the relay logs; nil logs nothing (the relay still decodes every message for its counters).
    var logFile: String? = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-bench-pull.log").path

    func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let upstream = try seededDatabase()
        var gatewayConfiguration = GatewayConfiguration(databases: [upstream])
        gatewayConfiguration.port = 0
        gatewayConfiguration.logger = Logger(label: "bench.gateway") { _ in SwiftLogNoOpLogHandler() }
        let gateway = try await GatewayServer.start(gatewayConfiguration, group: group)
        var relayConfiguration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1", port: gateway.port)))
        relayConfiguration.listenPort = 0
        if let logFile { try? FileManager.default.removeItem(atPath: logFile) }
        let sink = try logFile.map { try LineLogHandler.Sink.appending(to: $0) }
        let logger = Logger(label: "bench.relay") { _ in
            sink.map { LineLogHandler(sink: $0, level: .info) as LogHandler } ?? SwiftLogNoOpLogHandler()
        }
        let relay = RelayServer(configuration: relayConfiguration, group: group, logger: logger, lineSink: sink)
        let relayPort = try await relay.start().port ?? 0
        print(BenchMachine.current().line)
        print("pull bench: \(documents) small documents, best of \(rounds) one-shot pulls, \(System.coreCount) event loops; gateway :\(gateway.port), in-process relay :\(relayPort), relay log \(logFile ?? "off")")

        let direct = try await best(url: "ws://127.0.0.1:\(gateway.port)/db", group: group)
        let relayed = try await best(url: "ws://127.0.0.1:\(relayPort)/db", group: group)
        sink?.flush()
        let directRate = Double(documents) / direct, relayRate = Double(documents) / relayed
        print("path      seconds   docs/s")
        print("direct  ", String(format: "%8.3f %9.0f", direct, directRate))
        print("relay   ", String(format: "%8.3f %9.0f", relayed, relayRate))
        print(String(format: "relay / direct: %.2f", relayRate / directRate))
        try await relay.shutdown()
        try await gateway.stop()
        try await group.shutdownGracefully()
    }

    /// The fastest of `rounds` pulls into a fresh local database, in seconds.
    private func best(url: String, group: EventLoopGroup) async throws -> Double {
        var fastest = Double.infinity
        for _ in 0..<rounds {
            let local = GatewayDatabase(name: "local")
            var configuration = ReplicatorConfiguration(url: url, direction: .pull)
            configuration.logger = Logger(label: "bench.replicator") { _ in SwiftLogNoOpLogHandler() }
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await Replicator(configuration: configuration, database: local, group: group).run()
            let elapsed = clock.now - start
            guard result.pulledRevisions == documents else {
                throw BenchFailure("pulled \(result.pulledRevisions) of \(documents) documents from \(url)")
            }
            fastest = min(fastest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return fastest
    }

    /// Documents shaped like PullThroughputTests': an index, a name and a channel, ~80 bytes each.
    private func seededDatabase() throws -> GatewayDatabase {
        let database = GatewayDatabase(name: "db")
        for index in 0..<documents {
            try database.put(String(format: "doc-%06d", index),
                             body: ["index": .number(String(index)), "name": .string("document \(index)"),
                                    "channels": .string("bench")])
        }
        return database
    }
}

/// A benchmark run that did not do what it measures.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = "bench failed: " + description }
}
