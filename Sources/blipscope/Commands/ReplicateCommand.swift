import ArgumentParser
import BLIPNIO
import CommandLineSupport
import Gateway
import Logging
import NIOCore
import NIOPosix
import Replication
import ServiceLifecycle

/// `blipscope replicate URL`: the embedded replicator (an active peer, as Couchbase Lite's) against
/// any replication endpoint — Sync Gateway, `blipscope gateway`, or a relay in front of either —
/// with an in-memory local database.
struct ReplicateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Replicate an in-memory database with a gateway or relay URL, and print what happened.",
        usage: "blipscope replicate <url> (--pull | --push | --both) [--continuous] [--user <user> --password <password>] [--load <file>] [<options>]",
        discussion: """
            URL is ws[s]://HOST:PORT/DB. One-shot runs end when the pull has caught up and every push \
            is answered; --continuous runs until Ctrl-C. --load seeds the local database (documents \
            to push). Conflicts are reported, never resolved. Exits non-zero when the connection or \
            handshake fails.
            """
    )

    enum Direction: String, EnumerableFlag {
        case pull, push, both

        var replicator: ReplicatorConfiguration.Direction {
            switch self {
            case .pull: return .pull
            case .push: return .push
            case .both: return .pushAndPull
            }
        }
    }

    @Argument(help: "The database to replicate with, ws://HOST:PORT/DB or wss://….")
    var url: String

    @Flag(help: "Direction.")
    var direction: Direction

    @Flag(help: "Keep replicating changes of either side until Ctrl-C.")
    var continuous = false

    @Option(help: "Basic-auth user, sent after the server's 401 challenge.")
    var user: String?

    @Option(help: "Password for --user.")
    var password: String?

    @Option(help: "JSON file of local documents (to push), in `blipscope gateway --load` format.")
    var load: String?

    @Option(name: .customLong("collection"), help: "Replicate this collection, SCOPE.NAME (repeatable; default: the default collection).")
    var collections: [String] = []

    @Option(name: .customLong("channel"), help: "Pull only this channel (repeatable).")
    var channels: [String] = []

    @Option(name: .customLong("doc-id"), help: "Pull only this document (repeatable).")
    var docIDs: [String] = []

    @Option(help: "PEM CA bundle to verify a wss:// server.")
    var caBundle: String?

    @Flag(help: "Do not verify a wss:// server's certificate.")
    var insecure = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    func validate() throws {
        if (user == nil) != (password == nil) { throw ValidationError("--user and --password go together") }
    }

    func run() async throws {
        _ = try OptionCheck.upstreamURL(url, option: "the URL", expected: "ws://HOST:PORT/DB or wss://HOST:PORT/DB")
        if caBundle != nil { _ = try OptionCheck.clientTLS(caBundle: caBundle, insecure: insecure, option: "--ca-bundle") }
        let paths = collections.map(CollectionPath.init(parsing:))
        let local = GatewayDatabase(name: "local", collections: paths)
        let loaded = try load.map { try SeedData.load(from: OptionCheck.readableFile($0, option: "--load", holding: OptionCheck.seedHint), into: local) } ?? 0
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        if !json {
            let mode = continuous ? "continuous \(direction.rawValue), Ctrl-C to stop" : direction.rawValue
            FileHandleOutput.standardError("replicating \(url) (\(mode)), \(loaded) local documents")
        }
        let outcome: Result<ReplicationResult, any Error>
        do {
            outcome = .success(try await replicate(local, paths: paths, group: group))
        } catch {
            outcome = .failure(error)
        }
        // Only now: a Replicator must be gone before its event loop shuts down.
        try await group.shutdownGracefully()
        let result = try outcome.get()
        print(json ? result.json(url: url, direction: direction.rawValue, localDocuments: local.documentCount())
                   : result.rendered(url: url, direction: direction.rawValue, localDocuments: local.documentCount()))
    }

    /// Runs the replication under ServiceLifecycle (SIGINT/SIGTERM stop a continuous one).
    private func replicate(_ local: GatewayDatabase, paths: [CollectionPath], group: EventLoopGroup) async throws -> ReplicationResult {
        let replicator = Replicator(configuration: makeConfiguration(paths), database: local, group: group)
        let service = ReplicatorService(replicator: replicator)
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                                 gracefulShutdownSignals: [.sigint, .sigterm],
                                 logger: Logger(label: "blipscope.lifecycle") { _ in SwiftLogNoOpLogHandler() }))
        do {
            try await serviceGroup.run()
        } catch {
            throw service.failure ?? error
        }
        guard let result = service.result else { throw ValidationError("the replication was interrupted before it finished") }
        return result
    }

    func makeConfiguration(_ paths: [CollectionPath]) -> ReplicatorConfiguration {
        var configuration = ReplicatorConfiguration(url: url, direction: direction.replicator, continuous: continuous)
        configuration.username = user
        configuration.password = password
        configuration.collections = paths
        configuration.channels = channels.isEmpty ? nil : channels
        configuration.docIDs = docIDs.isEmpty ? nil : docIDs
        configuration.logger = .standardError("blipscope.replicator", level: .warning)
        if caBundle != nil || insecure { configuration.tls = BLIPClientTLS(caBundlePath: caBundle, insecure: insecure) }
        return configuration
    }
}

/// Runs one replication under ServiceLifecycle: SIGINT/SIGTERM stop a continuous replication
/// (which then returns its result); a one-shot run ends the group when it returns.
final class ReplicatorService: Service, @unchecked Sendable {
    let replicator: Replicator
    // Written once by `run()`, read after the service group has returned.
    private(set) var result: ReplicationResult?
    private(set) var failure: (any Error)?

    init(replicator: Replicator) { self.replicator = replicator }

    func run() async throws {
        do {
            let replicator = self.replicator
            result = try await withGracefulShutdownHandler {
                try await replicator.run()
            } onGracefulShutdown: {
                replicator.stop()
            }
        } catch {
            failure = error
            throw error
        }
    }
}
