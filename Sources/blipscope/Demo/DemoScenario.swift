import CommandLineSupport
import Foundation
import Gateway
import Logging
import NIOCore
import NIOPosix
import Relay
import Replication

/// What `blipscope demo` does, in one process: the embedded gateway seeded with the sample
/// documents, a relay in front of it logging every decoded message, and a replicator that pulls
/// the documents and then pushes a new document with an attachment, a changed one, a deletion and
/// a deliberate conflict, all through the relay. Every step is checked; a wrong outcome throws
/// ``DemoFailure``. The same scenario is exercised by `RelayedReplicationTests`.
struct DemoScenario {
    var seedFile: String
    /// Where the relay's log lines go (the narration goes there too when it is standard output).
    var sink: LineLogHandler.Sink
    var logLevel: Logger.Level = .info
    var logFormat: RelayConfiguration.LogFormat = .text
    /// Also record every session into capture files (``RelayConfiguration/captureDirectory``).
    var captureDirectory: String?
    /// Keep secret property values in those captures (``RelayConfiguration/captureSecrets``).
    var captureSecrets = false
    /// Prints a step heading, in order with the relay's log lines.
    var narrate: @Sendable (String) -> Void

    /// What happened, for the summary.
    struct Report: Sendable {
        var gatewayPort: Int
        var relayPort: Int
        var seeded: Int
        var pull: ReplicationResult
        var push: ReplicationResult
        var edits: DemoEdits
        var relay: SessionTally.Counts
        /// Capture files this run wrote, full paths.
        var captureFiles: [String] = []
    }

    func run(progress: DemoProgress) async throws -> Report {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        do {
            let report = try await run(on: group, progress: progress)
            try await group.shutdownGracefully()
            return report
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Starts the gateway and the relay, runs the two steps, stops both.
    private func run(on group: EventLoopGroup, progress: DemoProgress) async throws -> Report {
        let upstream = GatewayDatabase(name: "db")
        progress.step("loading \(seedFile)")
        let seeded = try SeedData.load(from: seedFile, into: upstream)
        var gatewayConfiguration = GatewayConfiguration(databases: [upstream])
        gatewayConfiguration.port = 0
        gatewayConfiguration.logger = Logger.standardError("blipscope.gateway", level: .warning)
        progress.step("starting the gateway")
        let gateway = try await GatewayServer.start(gatewayConfiguration, group: group)
        let upstreamURL = UpstreamURL(secure: false, host: "127.0.0.1", port: gateway.port)
        var relayConfiguration = RelayConfiguration(upstream: .single(upstreamURL))
        relayConfiguration.listenPort = 0
        relayConfiguration.logFormat = logFormat
        relayConfiguration.captureDirectory = captureDirectory
        relayConfiguration.captureSecrets = captureSecrets
        let capturesBefore = Self.captureFiles(in: captureDirectory)
        let tally = SessionTally()
        let sink = self.sink, level = logLevel
        let relay = RelayServer(configuration: relayConfiguration, group: group,
                                logger: Logger(label: "blipscope.relay") { _ in LineLogHandler(sink: sink, level: level) }, lineSink: sink,
                                observers: [tally])
        do {
            progress.step("starting the relay")
            let relayPort = try await relay.start().port ?? 0
            let url = "ws://127.0.0.1:\(relayPort)/\(upstream.name)"
            narrate("── demo: gateway ws://127.0.0.1:\(gateway.port)/db (\(seeded) sample documents), relay \(url) → gateway")
            let local = GatewayDatabase(name: "local")
            let pull = try await pullStep(url: url, upstream: upstream, local: local, group: group, tally: tally, progress: progress)
            let edits = try DemoEdits.choose(from: local)
            let push = try await pushStep(url: url, edits: edits, upstream: upstream, local: local, group: group,
                                          tally: tally, progress: progress)
            progress.step("stopping the relay and the gateway")
            try await relay.shutdown()
            try await gateway.stop()
            let captures = Self.captureFiles(in: captureDirectory).subtracting(capturesBefore).sorted()
            return Report(gatewayPort: gateway.port, relayPort: relayPort, seeded: seeded, pull: pull, push: push,
                          edits: edits, relay: tally.snapshot, captureFiles: captures)
        } catch {
            try? await relay.shutdown()
            try? await gateway.stop()
            throw error
        }
    }

    /// Step 1: pull every sample document through the relay; the local copies must be byte-equal.
    private func pullStep(url: String, upstream: GatewayDatabase, local: GatewayDatabase, group: EventLoopGroup,
                          tally: SessionTally, progress: DemoProgress) async throws -> ReplicationResult {
        progress.step("step 1, pulling through the relay")
        narrate("── step 1/2: pull — replicator ⇠ relay ⇠ gateway")
        let result = try await replicate(url: url, direction: .pull, local: local, group: group)
        await tally.waitForClosedSessions(1)
        let differing = DemoEdits.differences(upstream, local, ids: upstream.documentIDs())
        guard differing.isEmpty, result.pulledRevisions == upstream.documentCount() else {
            throw DemoFailure("the pull brought \(result.pulledRevisions) of \(upstream.documentCount()) documents; differing: \(differing.joined(separator: ", "))")
        }
        return result
    }

    /// Step 2: edit locally (and the conflicting document on the gateway too), push through the
    /// relay; everything but the conflict must arrive unchanged, and the conflict must be reported.
    private func pushStep(url: String, edits: DemoEdits, upstream: GatewayDatabase, local: GatewayDatabase,
                          group: EventLoopGroup, tally: SessionTally, progress: DemoProgress) async throws -> ReplicationResult {
        progress.step("step 2, pushing through the relay")
        let theirs = try edits.apply(local: local, upstream: upstream)
        narrate("── step 2/2: push — replicator ⇢ relay ⇢ gateway: new \(edits.added) (+ attachment \(DemoEdits.attachmentName)), changed \(edits.changed), deleted \(edits.deleted), \(edits.conflicted) edited on both sides (a conflict)")
        let result = try await replicate(url: url, direction: .push, local: local, group: group)
        await tally.waitForClosedSessions(2)
        try edits.verify(result, local: local, upstream: upstream, theirs: theirs)
        return result
    }

    private func replicate(url: String, direction: ReplicatorConfiguration.Direction, local: GatewayDatabase,
                           group: EventLoopGroup) async throws -> ReplicationResult {
        var configuration = ReplicatorConfiguration(url: url, direction: direction)
        configuration.proposeChanges = true  // as Couchbase Lite pushes to a modern Sync Gateway
        configuration.logger = Logger.standardError("blipscope.replicator", level: .warning)
        return try await Replicator(configuration: configuration, database: local, group: group).run()
    }
}

extension DemoScenario {
    /// The capture files now in `directory` (none without one).
    static func captureFiles(in directory: String?) -> Set<String> {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let url = URL(fileURLWithPath: directory)
        return Set(names.filter { $0.hasSuffix(".blipcap") }.map { url.appendingPathComponent($0).path })
    }
}

/// A demo step went wrong, or the demo ran out of time; the message says which and why.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = "demo failed: " + description }
}

/// The step the demo is at, for the timeout's message.
final class DemoProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var current = "starting"

    func step(_ name: String) { lock.withLock { current = name } }
    var currentStep: String { lock.withLock { current } }
}
