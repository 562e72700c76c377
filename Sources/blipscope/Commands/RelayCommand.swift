import CommandLineSupport
import Foundation
import ArgumentParser
import BLIPNIO
import Logging
import Mediation
import NIOCore
import NIOPosix
import FleetLimits
import NIOConcurrencyHelpers
import Policy
import Relay
import WebView
import ServiceLifecycle
import UnixSignals

/// `blipscope relay`: the man-in-the-middle between Couchbase Lite and Sync Gateway.
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Relay Couchbase Lite ⇄ Sync Gateway replication and log every BLIP message.",
        discussion: """
            Clients connect to ws://LISTEN/{db}/_blipsync (or wss:// with --tls-cert/--tls-key); each
            gets its own upstream WebSocket to the same path. Traffic is forwarded byte for byte and
            decoded on the side. SIGTERM drains the relay (/readyz fails, no new connection, sessions
            get --drain-timeout to end, then 1001); a second signal, or Ctrl-C, stops at once: sessions
            are closed with 1001, captures and logs flushed.
            """
    )

    @Option(help: "Address to listen on, HOST:PORT.")
    var listen = "127.0.0.1:4994"

    @Option(help: "Upstream gateway, ws://HOST:PORT or wss://HOST:PORT (used for every database without a --route). Repeat for several Sync Gateway nodes: each new session goes to a healthy node with the fewest live sessions.")
    var upstream: [String] = []

    @Option(help: "Per-database upstream, DB=URL or DB=URL1,URL2,… for several nodes (repeatable).")
    var route: [String] = []

    @Option(help: "Seconds between background health checks (GET /) of each upstream node; 0: no checks.")
    var upstreamCheckInterval: Double = Double(UpstreamHealthChecks.defaultInterval.nanoseconds) / 1e9

    @Option(help: "Seconds a health check waits for a node's answer before it fails.")
    var upstreamCheckTimeout: Double = Double(UpstreamHealthChecks().timeout.nanoseconds) / 1e9

    @Option(help: "Failed health checks in a row that take an upstream node down (it then gets no new sessions while another node of its route is up).")
    var upstreamFall = UpstreamHealthChecks().fall

    @Option(help: "Passed health checks in a row that bring a down upstream node back.")
    var upstreamRise = UpstreamHealthChecks().rise

    @Option(help: "PEM certificate chain to serve wss:// to clients.")
    var tlsCert: String?

    @Option(help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    @Option(help: "PEM CA bundle to verify a wss:// upstream.")
    var upstreamCA: String?

    @Flag(help: "Do not verify the upstream's TLS certificate.")
    var insecure = false

    @Flag(help: "Close a session (1011, with the reason) on the first decoding error instead of only logging it.")
    var strict = false

    @Flag(help: "Forward without decoding: sessions, frames and bytes are counted and captured (--capture, --pcap: decode them later with inspect), no message is logged or analysed. Not with --strict, --deny-profile or --policy.")
    var noDecode = false

    @Option(help: "Log format: text or json (JSON lines).")
    var logFormat: RelayConfiguration.LogFormat = .text

    @Option(help: "Log level: trace (bodies), debug (frames, ACKs), info (messages, sessions), warning.")
    var logLevel: Logger.Level = .info

    @Option(help: "Append the log to this file instead of standard output.")
    var logFile: String?

    @Option(help: "KiB of log lines that may wait for a log reader that fell behind (a paused pager, a stalled disk); past it lines are dropped, counted in an event=log-dropped line, and traffic goes on.")
    var logBacklogKib = LineLogHandler.Sink.defaultBacklogLimit / 1024

    @Flag(help: "Log document bodies as their size and hash only.")
    var redactBodies = false

    @Option(help: "Seconds to wait for the upstream's handshake answer, from the client's complete request (then 504 to the client).")
    var handshakeTimeout: Int64 = 10

    @Option(help: "Seconds a client has to send its whole request head after connecting (then 408).")
    var clientHeaderTimeout: Int64 = 10

    @Flag(help: "Behind a load balancer: every client connection starts with a PROXY protocol header, v1 or v2 (HAProxy send-proxy / send-proxy-v2), whose client address the relay uses (policy, logs, web view, captures, X-Forwarded-For); a connection without one is closed.")
    var proxyProtocol = false

    @Option(help: "With --proxy-protocol: seconds a connection has to send its whole PROXY header (then it is closed).")
    var proxyHeaderTimeout: Int64 = 5

    @Option(help: "On SIGTERM, seconds live sessions get to end by themselves before the rest are closed with 1001.")
    var drainTimeout: Int64 = 30

    @Option(help: "Seconds without traffic after which a session is closed (0: never).")
    var idleTimeout: Int64 = 900

    @Option(help: "Milliseconds forwarded frames may wait to be decoded, analysed and logged, so that one inspection covers several socket reads (10–20 % less user CPU on small messages in the project's runs); lines and captures keep the time each frame was read. 0: inspect every read at once.")
    var inspectionDelayMs: Double = 5

    @Option(help: "Forwarded frames (both directions), or KiB they hold (payloads plus the buffers of the reads they came in), at which waiting frames are inspected before --inspection-delay-ms is up, as FRAMES or FRAMES,KIB.")
    var inspectionBatch: String = "64,256"

    @Option(help: "Event loop threads (default: one per core).")
    var threads = System.coreCount

    @Option(help: "Pin one event loop to each listed CPU, e.g. 1 or 0-3,6 (replaces --threads); default: the kernel places threads.")
    var cpus: String?

    @Option(help: "Admin listener, HOST:PORT: /metrics (Prometheus), /healthz, /readyz, /sessions, and the web view at / (see --no-web). Off unless given.")
    var admin: String?

    @Option(help: "Bearer token required by the admin listener (mandatory when --admin is not loopback). Shows in the process list: prefer --admin-token-file or BLIPSCOPE_ADMIN_TOKEN.")
    var adminToken: String?

    @Option(help: "File whose first line is the admin listener's bearer token.")
    var adminTokenFile: String?

    @Option(help: "PEM certificate chain: the admin listener serves https (for a fleet's listeners reached over the network; a token sent in the clear from off the machine is refused).")
    var adminTlsCert: String?

    @Option(help: "PEM private key for --admin-tls-cert.")
    var adminTlsKey: String?

    @Flag(help: "With --admin: no web view (the page at / and /ui, its /api/ JSON and live feeds), so no session history is kept.")
    var noWeb = false

    @Option(name: .customLong("sg-log"), parsing: .upToNextOption, help: ArgumentHelp(
        "With --admin: Sync Gateway log files to follow (console output or sg_*.log), its lines shown beside the live sessions.",
        discussion: "Followed as tail -F does (a rotated file is read anew); a session is matched by the X-Correlation-ID of its 101."))
    var sgLog: [String] = []

    @Option(help: "With --admin: closed sessions the web view keeps.")
    var webClosedSessions = WebViewLimits.default.maxClosedSessions

    @Option(help: "With --admin: messages the web view keeps per session (the oldest are overwritten).")
    var webMessages = WebViewLimits.default.maxMessagesPerSession

    @Option(help: "With --admin: bytes of each message body the web view keeps for its detail view.")
    var webPreviewBytes = WebViewLimits.default.bodyPreviewBytes

    @Flag(help: "Label per-user metrics with user names (off: no user names in metrics).")
    var metricsUserLabels = false

    @Option(help: "Write one capture file per session (.blipcap, read by inspect/export) into this directory.")
    var capture: String?

    @Option(help: "With --capture: start a new file for a session once its file reaches this many MiB.")
    var captureMaxFileMb: Int?

    @Option(help: "With --capture, when the disk does not keep up: backpressure (pause reading, lose nothing) or drop (count and record the drops).")
    var captureOverflow = "backpressure"

    @Option(help: "Write every session's client leg (plaintext, with the HTTP upgrade) into this pcap file for Wireshark.")
    var pcap: String?

    @Flag(help: "Keep secret BLIP property values (Authorization, Cookie, token, password …) in --capture files and the --pcap as sent; by default they are masked inside the frames. Handshake headers stay redacted.")
    var captureSecrets = false

    @Option(help: "Deny every request with this Profile, either way (repeatable): the relay answers HTTP 403 itself and re-encodes the session from then on.")
    var denyProfile: [String] = []

    @Option(help: "Policy file (YAML): message and connection rules; reloaded on SIGHUP and when it changes.")
    var policy: String?

    @Flag(help: "With --policy: log what each rule would do, do nothing.")
    var policyDryRun = false

    @Option(help: "The fleet's Redis, redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://… (TLS): the policy's scope: fleet limits are shared there by every relay given the same URL.")
    var redis: String?

    @Option(help: "With a rediss:// --redis: PEM file of the CA certificates to verify Redis's certificate against (default: the system's).")
    var redisCa: String?

    @Option(help: "glibc heap settings: steady (blocks over 4 MiB mapped on their own, 16 MiB of free heap kept: large messages reuse memory), compact (128 KiB and 1 MiB: RSS stays flat under many churning sessions, at a CPU cost on messages over 128 KiB) or libc (glibc's adjusting defaults). MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ in the environment win.")
    var heap: HeapTuning.Profile = .steady

    @Flag(help: "The same as --heap compact.")
    var compactHeap = false

    @Option(help: "How glibc copies large blocks (x86-64): vector (its vector loop, never rep movsb, which was several times slower for the blocks inflating copies on the project's AMD machine; the relay re-executes itself once at start with glibc.cpu.x86_rep_movsb_threshold in GLIBC_TUNABLES) or libc (glibc's own choice). A GLIBC_TUNABLES that sets the threshold wins.")
    var copies: CopyTuning.Mode = .vector

    func run() async throws {
        // First: glibc reads its tunables only at start, so this may start the relay over.
        CopyTuning.reexecuteIfNeeded(copies)
        let heapProfile = compactHeap ? .compact : heap
        let heapApplied = HeapTuning.apply(heapProfile)
        let backlog = try OptionCheck.atLeast(logBacklogKib, 1, option: "--log-backlog-kib", unit: " KiB") * 1024
        if let logFile { try OptionCheck.writableFile(logFile, option: "--log-file", holding: "log file") }
        for path in sgLog { _ = try OptionCheck.readableFile(path, option: "--sg-log", holding: "Sync Gateway log file (console output or sg_*.log)") }
        let redisConfiguration = try redisOptions()
        let sink = try logFile.map { try LineLogHandler.Sink.appending(to: $0, format: logFormat, backlogLimit: backlog) }
            ?? .standardOutput(format: logFormat, backlogLimit: backlog)
        let level = logLevel
        let logger = Logger(label: "blipscope.relay") { _ in LineLogHandler(sink: sink, level: level) }
        let fleetMetrics = NIOLockedValueBox<RelayMetrics?>(nil)
        let fleet = try redisConfiguration.map { redis in
            try Self.fleetLimiter(redis, logger: logger) { change in fleetMetrics.withLockedValue { $0 }?.fleetLimits(degraded: change != .shared) }
        }
        let configuration = try makeConfiguration(fleet: fleet)
        let group = configuration.makeEventLoopGroup()
        let token = try AdminConfiguration.token(argument: adminToken, file: adminTokenFile,
                                                 environment: ProcessInfo.processInfo.environment)
        let adminTLS = try OptionCheck.serverTLS(certificate: adminTlsCert, key: adminTlsKey,
                                                 options: ("--admin-tls-cert", "--admin-tls-key"))
        if adminTLS != nil && admin == nil { throw ValidationError("--admin-tls-cert serves the admin listener: give --admin too") }
        var adminSetup = try admin.map { try AdminSetup.make(address: $0, token: token, tls: adminTLS, userLabels: metricsUserLabels) }
        if !sgLog.isEmpty && (adminSetup == nil || noWeb) {
            throw ValidationError("--sg-log shows Sync Gateway's lines in the web view: give --admin (and not --no-web)")
        }
        if adminSetup != nil && !noWeb {
            adminSetup?.history = HistoryObserver(history: SessionHistory(limits: webLimits, joinsSyncGatewayLog: !sgLog.isEmpty))
            adminSetup?.capture = configuration.captureDirectory.map { ($0, configuration.captureRun) }
        }
        fleetMetrics.withLockedValue { $0 = adminSetup?.observer.metrics }
        fleet?.start()
        defer { fleet?.stop() }
        let relay = RelayServer(configuration: configuration, group: group, logger: logger, lineSink: sink,
                                observers: adminSetup?.observers ?? [])
        let reloader = configuration.policy.map { PolicyReloader(store: $0, logger: logger) }
        reloader?.start()
        defer { reloader?.stop() }
        let service = RelayService(relay: relay, announce: { address in
            FileHandleOutput.standardError("blipscope relay listening on \(address), upstream \(describe(configuration.upstream))")
            FileHandleOutput.standardError(HeapTuning.summary(heapProfile, applied: heapApplied))
            FileHandleOutput.standardError(CopyTuning.summary(copies, environment: ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]))
            FileHandleOutput.standardError(Self.inspectionSummary(configuration))
        })
        // Shut down last to first: the relay drains while the admin listener still answers /readyz.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let adminSetup { services.append(.init(service: adminSetup.service(relay: relay, group: group))) }
        if let history = adminSetup?.history?.history, !sgLog.isEmpty {
            services.append(.init(service: SyncGatewayLogFollower(paths: sgLog, history: history)))
        }
        services.append(.init(service: service))
        let serviceGroup = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigint, .sigterm],
                                 logger: Logger(label: "blipscope.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        try await serviceGroup.run()
        try await group.shutdownGracefully()
        if !sink.flush() {
            FileHandleOutput.standardError("blipscope relay: the log's reader is not reading; its last lines are not written")
        }
    }

    var webLimits: WebViewLimits {
        var limits = WebViewLimits()
        limits.maxClosedSessions = max(0, webClosedSessions)
        limits.maxMessagesPerSession = max(1, webMessages)
        limits.bodyPreviewBytes = max(0, webPreviewBytes)
        return limits
    }
}

/// Runs the relay under ServiceLifecycle: start, wait for SIGTERM, drain
/// (``RelayServer/drain(timeout:)``); a second signal during the drain, or a SIGINT (Ctrl-C)
/// in the first place, stops it at once.
struct RelayService: Service {
    let relay: RelayServer
    let announce: @Sendable (SocketAddress) -> Void

    func run() async throws {
        // Trapped from the start: the group's own signal sequence ends at the first signal, and a
        // second one must still be seen (this sequence yields both).
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let address = try await relay.start()
        announce(address)
        try? await gracefulShutdown()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var iterator = signals.makeAsyncIterator()
                // Ctrl-C stops at once, as it always did; SIGTERM drains until a second signal.
                guard let first = await iterator.next() else { return }
                if first != .sigint { guard await iterator.next() != nil else { return } }
                relay.stopDraining()
            }
            await relay.drain()
            group.cancelAll()
        }
    }
}

extension RelayConfiguration.LogFormat: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

extension HeapTuning.Profile: ExpressibleByArgument {}
extension CopyTuning.Mode: ExpressibleByArgument {}
