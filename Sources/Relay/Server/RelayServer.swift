import BLIPNIO
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Replication
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The relay: accepts client WebSockets at `/{db}/_blipsync`, dials the upstream per client on
/// the same event loop, and joins the two in a ``RelaySession`` (GitHub issue 3).
///
/// Programmatic use (benchmarks, tests): make one with a configuration, an event loop group sized
/// to the machine and a logger; ``start()`` returns the bound address (port 0 picks one);
/// ``shutdown()`` closes the listener and every session with 1001; ``drain(timeout:)`` first gives
/// the sessions time to end by themselves (``RelayServer+Drain.swift``).
public final class RelayServer: Sendable {
    public let configuration: RelayConfiguration
    let group: EventLoopGroup
    private let observers: ObserverSet
    let state = NIOLockedValueBox(State())
    /// Checkpoint IDs seen across sessions, for the analyzers' shared-client findings.
    let checkpoints = CheckpointRegistry()
    /// Partly received messages of all mediating sessions (``RelayLimits/maxRelayBytesInProgress``).
    let inProgress: InProgressBudget
    /// For policy lines that are no relay event (dry-run refusals).
    let logger: Logger

    /// Where the per-node metrics go (the ``MetricsObserver``'s, when one observes).
    private let metrics: RelayMetrics?

    struct State {
        var listener: Channel?
        /// The nodes and their health checks, from ``start()`` on.
        var balancer: UpstreamBalancer?
        var nextSessionID: UInt64 = 1
        var sessions: [UInt64: RelaySession] = [:]
        /// Set when a drain began: not ready, no new session admitted.
        var draining = false
        /// What a drain waits on: completed once, by the last session's end, the timeout or ``stopDraining()``.
        var drainWait: EventLoopPromise<DrainEnd>?
        /// ``stopDraining()`` was called: a drain's wait, begun or to begin, ends at once.
        var drainStopped = false
    }

    /// - Parameters:
    ///   - logger: receives the ``LoggingObserver``'s lines (format and redaction from `configuration`),
    ///     and sets their level.
    ///   - lineSink: where the ``LoggingObserver``'s lines go as bytes instead, when given (the
    ///     handler behind `logger` writes to the same place).
    ///   - observers: further observers (metrics, capture, tests).
    public init(configuration: RelayConfiguration, group: EventLoopGroup, logger: Logger,
                lineSink: (any LogLineSink)? = nil, observers: [any RelayObserver] = []) {
        self.configuration = configuration
        self.group = group
        self.inProgress = InProgressBudget(limit: configuration.limits.maxRelayBytesInProgress)
        let logging = LoggingObserver(logger: logger, format: configuration.logFormat,
                                      redactBodies: configuration.redactBodies, sink: lineSink)
        let recorders = Self.recorders(for: configuration, logger: logger)
        self.observers = ObserverSet([logging] + observers + recorders)
        let metricsObserver = observers.lazy.compactMap({ $0 as? MetricsObserver }).first
        if let metrics = metricsObserver {
            for case let capture as CaptureObserver in recorders { capture.reportProgress(to: metrics.captured) }
        }
        self.metrics = metricsObserver?.metrics
        self.logger = logger
    }

    /// Binds the listener. Fails on a bad TLS certificate or key (the upstream trust is read only
    /// when an upstream is wss), or a busy address.
    public func start() async throws -> SocketAddress {
        for recorder in observers.recorders { try recorder.prepare() }
        let serverContext = try configuration.serverTLS?.makeContext()
        // Only for wss upstreams: the context loads the trust store (the system's: some 150
        // certificates parsed, ~38 M instructions and a few MiB of heap) that ws:// never reads.
        let upstreamContext = configuration.upstream.anySecure ? try configuration.upstreamTLS.makeContext() : nil
        let connector = UpstreamConnector(configuration: configuration, sslContext: upstreamContext)
        let balancer = UpstreamBalancer(routing: configuration.upstream, checks: configuration.upstreamChecks, group: group,
                                        sslContext: upstreamContext, logger: logger, metrics: metrics)
        let limits = configuration.limits
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childKeepAlive(configuration.tcpKeepAlive)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: limits.writeBufferLowWater,
                                                                    high: limits.writeBufferHighWater))
            .childChannelOption(.recvAllocator, value: limits.readAllocator)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try ClientPipeline(server: self, connector: connector, balancer: balancer, sslContext: serverContext)
                        .configure(channel)
                }
            }
            .bind(host: configuration.listenHost, port: configuration.listenPort).get()
        state.withLockedValue { $0.listener = channel; $0.balancer = balancer }
        balancer.start()
        return channel.localAddress!
    }

    /// The bound address, once started.
    public var localAddress: SocketAddress? { state.withLockedValue { $0.listener?.localAddress } }

    /// Closes the listener, then every session (CLOSE 1001 to both sides), and waits for them;
    /// then writes out and closes every capture file and the pcap (``RelayRecorder/finish()``).
    public func shutdown() async throws {
        let (listener, sessions, balancer) = state.withLockedValue { ($0.listener, Array($0.sessions.values), $0.balancer) }
        balancer?.stop()
        try? await listener?.close()
        var closing: [EventLoopFuture<Void>] = []
        for session in sessions {
            let promise = session.eventLoop.makePromise(of: Void.self)
            session.eventLoop.execute {
                if session.isFinished { promise.succeed(()) } else {
                    session.whenFinished { promise.succeed(()) }
                    session.shutDown()
                }
            }
            closing.append(promise.futureResult)
        }
        for future in closing { try? await future.get() }
        for recorder in observers.recorders { await recorder.finish() }
    }

    /// Counters of the sessions now open.
    /// The capture files' totals (``CaptureObserver/Statistics``), when the relay captures.
    public var captureStatistics: CaptureObserver.Statistics? {
        observers.recorders.lazy.compactMap { $0 as? CaptureObserver }.first?.statistics
    }

    public func statistics() async -> [SessionStatistics] {
        let sessions = state.withLockedValue { Array($0.sessions.values) }
        var result: [SessionStatistics] = []
        for session in sessions {
            if let stats = try? await session.eventLoop.submit({ session.currentStatistics }).get() { result.append(stats) }
        }
        return result.sorted { $0.sessionID < $1.sessionID }
    }

    /// The open sessions' read allocators, client hop then upstream hop (``RelayLimits/readBufferMinimum``).
    func readAllocators() async -> [[AdaptiveRecvByteBufferAllocator?]] {
        let sessions = state.withLockedValue { Array($0.sessions.values) }
        var result: [[AdaptiveRecvByteBufferAllocator?]] = []
        for session in sessions {
            if let allocators = try? await session.eventLoop.submit({ session.readAllocators() }).get() { result.append(allocators) }
        }
        return result
    }

    /// Whether every route has a healthy node, and why not (``UpstreamBalancer/readiness(probeTimeout:)``);
    /// not ready before ``start()``.
    public func upstreamReadiness(probeTimeout: TimeAmount) async -> UpstreamReadiness {
        guard let balancer = state.withLockedValue({ $0.balancer }) else { return UpstreamReadiness(reasons: ["relay not started"]) }
        return await balancer.readiness(probeTimeout: probeTimeout)
    }

    /// The nodes' health and live sessions, once started (tests, the admin listener).
    var balancer: UpstreamBalancer? { state.withLockedValue { $0.balancer } }

    /// Number of sessions now open.
    public var sessionCount: Int { state.withLockedValue { $0.sessions.count } }

    // MARK: used by the pipeline

    func makeSessionID() -> UInt64 {
        state.withLockedValue { state in
            defer { state.nextSessionID += 1 }
            return state.nextSessionID
        }
    }

    func register(_ session: RelaySession) {
        let id = session.info.id
        state.withLockedValue { $0.sessions[id] = session }
        session.whenFinished { [self] in
            let allEnded = state.withLockedValue { state in
                state.sessions.removeValue(forKey: id)
                return state.draining && state.sessions.isEmpty
            }
            if allEnded { endDrainWait(.allEnded) }
        }
    }

    var observerSet: ObserverSet { observers }

    /// The capture and pcap observers `configuration` asks for.
    private static func recorders(for configuration: RelayConfiguration, logger: Logger) -> [any RelayObserver] {
        var recorders: [any RelayObserver] = []
        if let directory = configuration.captureDirectory {
            var options = CaptureObserver.Options(directory: directory, maxFileBytes: configuration.captureMaxFileBytes,
                                                  overflow: configuration.captureOverflow)
            options.redactsSecrets = !configuration.captureSecrets
            options.decoderLimits = configuration.limits.decoder
            options.run = configuration.captureRun
            recorders.append(CaptureObserver(options: options, logger: logger))
        }
        if let path = configuration.pcapPath {
            recorders.append(PcapObserver(path: path, relayPort: configuration.listenPort, logger: logger,
                                          redactsSecrets: !configuration.captureSecrets,
                                          decoderLimits: configuration.limits.decoder))
        }
        if configuration.captureSecrets, configuration.captureDirectory != nil || configuration.pcapPath != nil {
            logger.warning("--capture-secrets: capture files and the pcap hold secret BLIP property values (Authorization, Cookie, tokens, passwords) as sent; handshake headers stay redacted")
        }
        return recorders
    }
}
