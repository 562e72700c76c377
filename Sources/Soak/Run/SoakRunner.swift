import Foundation
import Gateway
import Logging
import NIOCore
import NIOPosix

/// Runs a soak: the echo server and the embedded gateway as the relay's upstreams, the relay as
/// a process of its own (capture and admin on), and ``SoakConfiguration/sessions`` slots that
/// each run one session after another, echo sessions of the mixed kinds (``SessionKind``) and
/// now and then a replication pull, until the message budget is spent. The relay's RSS and
/// descriptors are read before the first session, once the warm-up share is echoed, every few
/// seconds, when the budget is spent, and once idle again; its metrics are read at the end.
public struct SoakRunner: Sendable {
    public var configuration: SoakConfiguration
    /// Called with a one-line status at every periodic reading (for a long run's log).
    public var status: (@Sendable (String) -> Void)?

    public init(configuration: SoakConfiguration) {
        self.configuration = configuration
    }

    public func run(startRelay: @Sendable (SoakRelayLaunch) async throws -> any SoakRelay) async throws -> SoakReport {
        let configuration = self.configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let bodies = SoakBodies(seed: configuration.seed)
        let echo = try await SoakEchoServer.start(bodies: bodies, numberLimit: configuration.messageNumberLimit, group: group)
        let gateway = try await GatewayServer.start(gatewayConfiguration(), group: group)
        let workDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("blipscope-soak-\(ProcessInfo.processInfo.processIdentifier)").path
        try? FileManager.default.removeItem(atPath: workDirectory)
        let captureDirectory = (workDirectory as NSString).appendingPathComponent("capture")
        try FileManager.default.createDirectory(atPath: captureDirectory, withIntermediateDirectories: true)
        let launch = SoakRelayLaunch(echoPort: echo.port, gatewayPort: gateway.port, adminPort: try await Self.freePort(),
                                     captureDirectory: captureDirectory,
                                     logFile: (workDirectory as NSString).appendingPathComponent("relay.log"),
                                     captureMaxFileMiB: configuration.captureMaxFileMiB)
        let relay = try await startRelay(launch)
        let progress = SoakProgress(messages: configuration.messages, warmUpShare: configuration.warmUpShare)
        let sampler = SoakSampler(probe: ProcessProbe(pid: relay.processIdentifier), progress: progress,
                                  sweeper: CaptureSweeper(directory: captureDirectory, readBackEvery: configuration.readBackEvery))
        let report: SoakReport
        do {
            report = try await soak(relay: relay, launch: launch, echo: echo, bodies: bodies, progress: progress, sampler: sampler, group: group)
        } catch {
            await relay.stop()
            throw error
        }
        try? await echo.close()
        try? await gateway.stop()
        try? await group.shutdownGracefully()
        if report.passed {
            try? FileManager.default.removeItem(atPath: workDirectory)
        } else {
            status?("relay log kept: \(launch.logFile)")
        }
        return report
    }

    private func soak(relay: any SoakRelay, launch: SoakRelayLaunch, echo: SoakEchoServer, bodies: SoakBodies, progress: SoakProgress,
                      sampler: SoakSampler, group: EventLoopGroup) async throws -> SoakReport {
        let configuration = self.configuration
        // The admin listener answers once the relay is up; the first scrape also sets up
        // whatever the relay creates lazily for it, before the baseline.
        _ = try await scrapeWhenUp(port: launch.adminPort, group: group)
        await sampler.take(.baseline)
        let status = self.status
        let periodic = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(configuration.sampleSeconds))
                let sample = await sampler.take(.periodic)
                let capture = await sampler.sweep()
                if let status, let sample {
                    status(String(format: "%6.0f s  %@ echoed  relay RSS %.1f MiB  fds %d  capture on disk peak %.0f MB",
                                  sample.seconds, String(sample.echoed), Double(sample.rssKiB) / 1024, sample.fds,
                                  Double(capture.peakDiskBytes) / 1e6))
                }
            }
        }
        let onWarmUp: @Sendable () -> Void = { Task { await sampler.take(.warmUp) } }
        let started = await sampler.elapsedSeconds
        await withTaskGroup(of: Void.self) { slots in
            for _ in 0..<configuration.sessions {
                slots.addTask {
                    while let next = progress.nextSession(wanted: { self.wantedMessages(session: $0) }) {
                        let tally = await runSession(index: next.index, messages: next.messages, relayPort: relay.port,
                                                     echo: echo, bodies: bodies, progress: progress, group: group, onWarmUp: onWarmUp)
                        progress.finished(tally)
                    }
                    if progress.markBudgetSpent() { await sampler.take(.loadEnd) }
                }
            }
        }
        let seconds = await sampler.elapsedSeconds - started
        periodic.cancel()
        // Idle again: wait (at most ``SoakConfiguration/idleSettleSeconds``) until the relay has
        // closed every session and given back its descriptors, then read it once more.
        var counters = RelayCounters(metrics: try await MetricsScrape.fetch(port: launch.adminPort, group: group))
        let baselineFDs = await sampler.samples.first { $0.moment == .baseline }?.fds ?? 0
        let settled = ContinuousClock.now + .seconds(configuration.idleSettleSeconds)
        while ContinuousClock.now < settled {
            let fds = ProcessProbe(pid: relay.processIdentifier).openDescriptors() ?? 0
            if counters.activeSessions == 0 && fds <= baselineFDs { break }
            try await Task.sleep(for: .milliseconds(100))  // a bounded poll of another process, not a synchronization
            counters = RelayCounters(metrics: try await MetricsScrape.fetch(port: launch.adminPort, group: group))
        }
        await sampler.take(.idle)
        await relay.stop()
        let capture = await sampler.sweep(final: true)
        let logLines = (try? String(contentsOfFile: launch.logFile, encoding: .utf8))?.split(separator: "\n").count ?? 0
        return SoakReport(messages: configuration.messages, sessions: configuration.sessions, seconds: seconds,
                          tally: progress.totals, relay: counters, capture: capture, relayLogLines: logLines,
                          samples: await sampler.samples, target: configuration.target)
    }

    /// Session `index`: every ``SoakConfiguration/replicationEvery``-th a replication pull, the
    /// others echo sessions of a kind picked by the seeded draw.
    private func runSession(index: Int, messages: Int, relayPort: Int, echo: SoakEchoServer, bodies: SoakBodies, progress: SoakProgress,
                            group: EventLoopGroup, onWarmUp: @escaping @Sendable () -> Void) async -> SessionTally {
        let configuration = self.configuration
        let timeout = configuration.sessionTimeoutSeconds
        var tally = SessionTally()
        if isReplication(index) {
            tally = await SoakReplicationSession(url: "ws://127.0.0.1:\(relayPort)/\(SoakRelayLaunch.gatewayDatabase)",
                                                 expectedRevisions: configuration.replicationDocuments,
                                                 timeout: .milliseconds(Int64(timeout * 1000))).run(group: group)
        }
        guard messages > 0 else { return tally }
        let session = SoakEchoSession(id: UInt64(index + 1), kind: kind(index), messages: messages, bodies: bodies,
                                      numberLimit: configuration.messageNumberLimit, timeout: .milliseconds(Int64(timeout * 1000)))
        return tally + (await session.run(port: relayPort, echo: echo, progress: progress, group: group, onWarmUp: onWarmUp))
    }

    private func isReplication(_ index: Int) -> Bool {
        configuration.replicationEvery > 0 && index % configuration.replicationEvery == configuration.replicationEvery - 1
    }

    private func kind(_ index: Int) -> SessionKind {
        SessionKind.pick(SoakRandom.mix(configuration.seed ^ UInt64(index) &* 0x9E37_79B9))
    }

    /// The numbered messages session `index` asks of the budget (0 for a replication session).
    func wantedMessages(session index: Int) -> Int {
        guard !isReplication(index) else { return 0 }
        var random = SoakRandom(seed: SoakRandom.mix(configuration.seed &+ UInt64(index)))
        let share = max(1, Int(Double(configuration.sessionShare) * kind(index).share))
        return max(1, share / 2 + Int(random.next() % UInt64(share - share / 2 + 1)))
    }

    private func gatewayConfiguration() throws -> GatewayConfiguration {
        let database = GatewayDatabase(name: SoakRelayLaunch.gatewayDatabase)
        for index in 0..<configuration.replicationDocuments {
            try database.put(String(format: "doc-%06d", index),
                             body: ["index": .number(String(index)), "name": .string("document \(index)"),
                                    "channels": .string("soak")])
        }
        var gateway = GatewayConfiguration(databases: [database])
        gateway.port = 0
        gateway.logger = Logger(label: "blipscope.soak.gateway") { _ in SwiftLogNoOpLogHandler() }
        return gateway
    }

    private func scrapeWhenUp(port: Int, group: EventLoopGroup) async throws -> MetricsText {
        var lastError: Error = SoakError("the relay's admin listener never answered")
        for _ in 0..<100 {
            do {
                return try await MetricsScrape.fetch(port: port, group: group)
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(100))  // bounded poll until the child listens
            }
        }
        throw lastError
    }

    /// A loopback port free now (bound and released), for the relay's admin listener, which
    /// does not announce the port it bound.
    static func freePort() async throws -> Int {
        let socket = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = socket.localAddress?.port
        try await socket.close().get()
        guard let port else { throw SoakError("no free loopback port") }
        return port
    }
}
