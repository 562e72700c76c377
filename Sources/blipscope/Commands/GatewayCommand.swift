import CommandLineSupport
import Foundation
import ArgumentParser
import BLIPNIO
import Gateway
import Logging
import NIOCore
import NIOPosix
import Replication
import ServiceLifecycle

/// `blipscope gateway`: the embedded in-memory replication peer (a stand-in for Sync Gateway) on
/// the network until SIGINT/SIGTERM. Nothing is persisted.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Run the embedded in-memory gateway (a Sync Gateway stand-in) until Ctrl-C.",
        discussion: """
            Serves ws://LISTEN/{db}/_blipsync for every --db (default: db). --load seeds every \
            database from a JSON file ({"docs": […], "collections": {"scope.name": […]}}); --users \
            requires Basic auth ({"users": {"alice": {"password": "…"}}}), otherwise everyone is \
            let in as a guest. Documents live in memory only.
            """
    )

    @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:4984"

    @Option(name: .customLong("db"), help: "Database to serve (repeatable; default: db).")
    var databases: [String] = []

    @Option(help: "JSON file of documents loaded into every database.")
    var load: String?

    @Option(help: "JSON file of users ({\"users\": {\"NAME\": {\"password\": \"…\"}}}); without it everyone is a guest.")
    var users: String?

    @Option(name: .customLong("collection"), help: "Extra collection, SCOPE.NAME, in every database (repeatable).")
    var collections: [String] = []

    @Flag(help: "Accept conflicting revisions (pre-3.0 Sync Gateway); by default pushes must descend from the current revision.")
    var allowConflicts = false

    @Option(help: "PEM certificate chain to serve wss://.")
    var tlsCert: String?

    @Option(help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    @Option(help: "Gateway log level (written to standard error).")
    var logLevel: Logger.Level = .notice

    @Option(name: .customLong("sg-log-file"),
            help: "Also write a line per replication request handled, in Sync Gateway's log format, to this file (for inspect --sg-log).")
    var sgLogFile: String?

    func run() async throws {
        let configuration = try makeConfiguration()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let service = GatewayService(configuration: configuration, group: group, announce: { port in
            let names = configuration.databases.map { database in
                "\(database.name) (\(database.documentCount()) docs)"
            }
            let scheme = configuration.tls == nil ? "ws" : "wss"
            FileHandleOutput.standardError("blipscope gateway listening on \(scheme)://\(configuration.host):\(port), databases \(names.joined(separator: ", ")); Ctrl-C to stop")
        })
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [.sigint, .sigterm],
                                 logger: Logger(label: "blipscope.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        try await serviceGroup.run()
        try await group.shutdownGracefully()
    }

    func makeConfiguration() throws -> GatewayConfiguration {
        let (host, port) = try OptionCheck.hostPort(listen, option: "--listen")
        let paths = collections.map(CollectionPath.init(parsing:))
        let names = databases.isEmpty ? ["db"] : databases
        var loaded: [GatewayDatabase] = []
        for name in names {
            let database = GatewayDatabase(name: name, collections: paths)
            if let load { try SeedData.load(from: OptionCheck.readableFile(load, option: "--load", holding: OptionCheck.seedHint), into: database) }
            loaded.append(database)
        }
        var configuration = GatewayConfiguration(databases: loaded)
        configuration.host = host
        configuration.port = port
        if let users {
            configuration.users = try GatewayConfiguration.loadUsers(
                from: OptionCheck.readableFile(users, option: "--users", holding: "JSON file of users (name → password)"))
        }
        configuration.conflictFree = !allowConflicts
        configuration.tls = try OptionCheck.serverTLS(certificate: tlsCert, key: tlsKey)
        configuration.logger = .standardError("blipscope.gateway", level: logLevel)
        if let sgLogFile {
            guard FileManager.default.createFile(atPath: sgLogFile, contents: nil),
                  let handle = FileHandle(forWritingAtPath: sgLogFile) else {
                throw CommandFailure(cause: "cannot write --sg-log-file \(sgLogFile)", hint: "name a file in a directory you can write to")
            }
            let lock = NSLock()
            configuration.syncGatewayLog = { line in lock.withLock { handle.write(Data((line + "\n").utf8)) } }
        }
        return configuration
    }
}

/// Runs the gateway under ServiceLifecycle: start, announce the port, wait for SIGINT/SIGTERM,
/// close every connection with 1001.
struct GatewayService: Service {
    let configuration: GatewayConfiguration
    let group: EventLoopGroup
    let announce: @Sendable (Int) -> Void

    func run() async throws {
        let server = try await GatewayServer.start(configuration, group: group)
        announce(server.port)
        try? await gracefulShutdown()
        try await server.stop()
    }
}

extension Logger {
    /// A logger writing swift-log's usual lines to standard error, from `level` up.
    static func standardError(_ label: String, level: Logger.Level) -> Logger {
        Logger(label: label) { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
