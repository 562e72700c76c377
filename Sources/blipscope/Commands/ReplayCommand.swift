import ArgumentParser
import CommandLineSupport
import Foundation
import NIOPosix
import Replay

/// `blipscope replay CAPTURE (--target URL | --serve HOST:PORT)`: plays one side of a captured
/// session against a live peer and compares what comes back with what was recorded.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay the client side of a captured session against a gateway, or serve its server side to a client.",
        usage: "blipscope replay <capture> (--target <url> | --serve <host:port>) [--timing deps|recorded|xN] [--user <user> --password <password>] [--client-id <id>] [--allow <key> …] [--json]",
        discussion: """
            CAPTURE is a BlipScope capture file or a pcap/pcapng file (as `inspect` reads them). \
            --target ws[s]://HOST:PORT/DB replays the client's requests on a new connection \
            (/_blipsync is appended) and answers the gateway's own requests with the recorded replies. \
            --serve HOST:PORT plays the gateway for one client connection. The report compares each \
            recorded reply with the new one (status, Error-Domain/Error-Code, properties, JSON body \
            paths). --allow names what may differ: sequences, checkpoint-rev (both allowed unless \
            --strict), revs, checkpoints, unmatched, or a [profile:]path pattern with * and **. \
            Exit status: 0 the replay matches, 1 replies differ, 2 usage, capture or connection error.
            """
    )

    @Argument(help: "The capture to replay: a BlipScope capture file or a pcap/pcapng file.")
    var capture: String

    @Option(help: "Client role: the database URL to replay against, ws[s]://HOST:PORT/DB.")
    var target: String?

    @Option(help: "Server role: listen on HOST:PORT and play the recorded gateway to one client.")
    var serve: String?

    @Option(help: "When requests go: deps (after the replies recorded before them, default), recorded, or xN (recorded gaps divided by N).")
    var timing = "deps"

    @Option(help: "Basic-auth user for the replayed handshake (replaces the recorded Authorization).")
    var user: String?

    @Option(help: "Password for --user.")
    var password: String?

    @Option(name: .customLong("header"), help: "A handshake header 'Name: value' replacing the recorded one (repeatable).")
    var headers: [String] = []

    @Option(help: "Replace the checkpoint client ID (getCheckpoint/setCheckpoint client, getCollections checkpoint_ids).")
    var clientID: String?

    @Option(help: "Replace the since property of subChanges.")
    var since: String?

    @Option(name: .customLong("allow"), help: "What may differ without failing (repeatable): a name or a [profile:]path pattern.")
    var allow: [String] = []

    @Flag(help: "Do not allow sequences and checkpoint-rev by default.")
    var strict = false

    @Option(help: "Which WebSocket session of the capture (its connection index; default: the first).")
    var session: Int?

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @Option(help: "Give up after this many seconds in all (0 = never).")
    var timeout: Double = 120

    @Option(help: "Give up when nothing arrives from the peer for this many seconds while waiting.")
    var stall: Double = 10

    func run() async throws {
        let report: ReplayReport
        do {
            report = try await replay()
        } catch {
            FileHandleOutput.standardError("blipscope replay: \(error)")
            throw ExitCode(2)
        }
        if json {
            print(report.jsonText())
        } else {
            for line in report.textLines() { print(line) }
        }
        if !report.matches { throw ExitCode(1) }
    }

    private func replay() async throws -> ReplayReport {
        guard (target == nil) != (serve == nil) else {
            throw ReplayCommandError("give exactly one of --target URL (client role) and --serve HOST:PORT (server role)")
        }
        let configuration = try makeConfiguration()
        let recorded = try CapturedSession.load(path: capture, session: session)
        if timeout > 0 {
            let limit = timeout
            Task.detached {
                try await Task.sleep(for: .seconds(limit))
                FileHandleOutput.standardError("blipscope replay: gave up after \(limit) s (--timeout)")
                Foundation.exit(2)
            }
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let outcome: Result<ReplayReport, any Error>
        do {
            outcome = .success(try await play(recorded, configuration: configuration, group: group))
        } catch {
            outcome = .failure(error)
        }
        try? await group.shutdownGracefully()
        return try outcome.get()
    }

    private func play(_ recorded: CapturedSession, configuration: ReplayConfiguration,
                      group: MultiThreadedEventLoopGroup) async throws -> ReplayReport {
        if let target {
            return try await ReplayClient.run(recorded.script(for: .client), session: recorded.id, target: target,
                                              configuration: configuration, group: group)
        }
        let (host, port) = try listenAddress()
        let server = try await ReplayServer.start(recorded.script(for: .server), session: recorded.id, host: host,
                                                  port: port, configuration: configuration, group: group)
        if !json { FileHandleOutput.standardError("replaying the server side of session \(recorded.id) on \(host):\(server.port)") }
        var reports = server.reports.makeAsyncIterator()
        let report = await reports.next()
        await server.stop()
        guard let report else { throw ReplayCommandError("the server stopped before a client connected") }
        return report
    }

    private func makeConfiguration() throws -> ReplayConfiguration {
        guard let timing = ReplayTiming(argument: timing) else {
            throw ReplayCommandError("--timing \(self.timing): use deps, recorded or xN (N > 0)")
        }
        if (user == nil) != (password == nil) { throw ReplayCommandError("--user and --password go together") }
        var configuration = ReplayConfiguration(allowances: try ReplayAllowances((strict ? [] : ReplayAllowances.defaults) + allow))
        configuration.timing = timing
        configuration.stallTimeout = .milliseconds(Int64(max(0.001, stall) * 1000))
        if let user, let password { configuration.substitutions.setCredentials(user: user, password: password) }
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ReplayCommandError("--header \(header): use 'Name: value'") }
            configuration.substitutions.setHeader(name: header[..<colon].trimmingCharacters(in: .whitespaces),
                                                  value: header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        configuration.substitutions.clientID = clientID
        configuration.substitutions.since = since
        return configuration
    }

    private func listenAddress() throws -> (String, Int) {
        guard let serve, let colon = serve.lastIndex(of: ":"), let port = Int(serve[serve.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw ReplayCommandError("--serve \(serve ?? ""): use HOST:PORT")
        }
        let host = String(serve[..<colon])
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }
}

struct ReplayCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
