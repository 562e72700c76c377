import ArgumentParser
import CommandLineSupport
import Logging
import NIOCore
import NIOPosix
import Relay
import ServiceLifecycle
import SyncGatewayLog
import WebView

/// `blipscope web CAPTURE…`: the relay's web view over capture files (the offline case: a
/// capture someone sent), on a loopback port, until SIGINT/SIGTERM.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Open capture files (.blipcap, pcap) in the web view: sessions, messages, documents, findings.",
        discussion: """
            Reads every WebSocket connection of the files (as inspect does) into the web view and \
            serves it at the printed URL until Ctrl-C. Loopback only unless --listen says otherwise \
            (then --token is required). Property values that look secret are shown redacted.
            """
    )

    @Argument(help: "Capture files or directories (.blipcap sessions, pcap).")
    var files: [String] = []

    @Option(help: "Address to serve on, HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:0"

    @Option(help: "Messages kept per session (the oldest are dropped beyond it).")
    var maxMessages = 200_000

    @Option(help: "Bytes of each message body kept for the detail view.")
    var previewBytes = 4096

    @Option(help: "Bearer token the page needs (as ?access_token=); required off loopback.")
    var token: String?

    @Option(name: .customLong("sg-log"), parsing: .upToNextOption, help: ArgumentHelp(
        "Sync Gateway log files (console output or sg_*.log, rotated .gz too) to show beside the sessions.",
        discussion: "Each session is matched by the X-Correlation-ID of its 101 (c:[…] in SG's log)."))
    var sgLog: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one capture file or directory") }
    }

    func run() async throws {
        let (host, port) = try OptionCheck.hostPort(listen, option: "--listen")
        // The admin listener's rules: loopback unless a token is given, then the token compared
        // as that listener compares it.
        let access = AdminConfiguration(host: host, port: port, bearerToken: token)
        do { try access.validate() } catch { throw ValidationError("--listen \(host) is not loopback: give --token") }
        var limits = WebViewLimits()
        limits.maxLiveSessions = 1
        limits.maxClosedSessions = 100_000
        limits.maxMessagesPerSession = max(1, maxMessages)
        limits.bodyPreviewBytes = max(0, previewBytes)
        limits.maxCopiedBytesPerSession = max(limits.maxCopiedBytesPerSession,
                                              (limits.bodyPreviewBytes + limits.maxPropertyBytes) * 50_000)
        let history = SessionHistory(limits: limits, joinsSyncGatewayLog: !sgLog.isEmpty)
        let loaded: CaptureHistoryLoader.Loaded
        do {
            loaded = try CaptureHistoryLoader.load(files, into: history)
        } catch {
            throw CommandFailure(cause: "cannot read \(files.joined(separator: " ")): \(error)", hint: OptionCheck.captureHint)
        }
        for failure in loaded.failures { FileHandleOutput.standardError("blipscope web: \(failure)") }
        var sgLines = 0
        if !sgLog.isEmpty {
            let log: SyncGatewayLog
            do { log = try SyncGatewayLog(reading: sgLog, correlationIDs: history.correlationIDs) } catch {
                throw CommandFailure(cause: error.description, hint: "give the console output or sg_*.log files Sync Gateway wrote")
            }
            for (_, lines) in log.lines {
                history.addSyncGatewayLines(lines)
                sgLines += lines.count
            }
        }
        let sgLineCount = sgLines
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let api = WebAPI(history: history, downloads: CaptureFileDownloads(files: loaded.captureFiles),
                         now: { .infinity })
        let server = WebServer(api: api, host: host, port: port, authorizes: { access.authorizes($0) }, group: group)
        let service = WebService(server: server) { address in
            let shown = address.port.map { "http://\(host.contains(":") ? "[\(host)]" : host):\($0)/" } ?? "\(address)"
            FileHandleOutput.standardError("blipscope web: \(loaded.sessions) session(s), \(loaded.messages) message(s)"
                                           + (sgLog.isEmpty ? "" : ", \(sgLineCount) Sync Gateway log line(s)"))
            FileHandleOutput.standardOutput("\(shown)\(token.map { "?access_token=\($0)" } ?? "")")
        }
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [.sigint, .sigterm],
                                 logger: Logger(label: "blipscope.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        try await serviceGroup.run()
        try await group.shutdownGracefully()
    }
}

/// Runs ``WebServer`` until graceful shutdown.
struct WebService: Service {
    let server: WebServer
    let announce: @Sendable (SocketAddress) -> Void

    func run() async throws {
        announce(try await server.start())
        try? await gracefulShutdown()
        try await server.shutdown()
    }
}
