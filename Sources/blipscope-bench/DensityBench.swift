import ArgumentParser
import Foundation

struct DensityBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "density",
        abstract: "Idle continuous pulls through a relay child: its RSS and descriptors per session, idle CPU, time to open them."
    )

    @Option(help: "Continuous pulls to open (each takes four descriptors on this machine: two here, two in the relay).")
    var sessions = 1_000

    @Option(help: "Seconds between each session's WebSocket PING (Couchbase Lite's heartbeat is 300 s by default).")
    var pingSeconds = 300.0

    @Option(help: "Seconds of idleness over which the relay's CPU is measured.")
    var idleSeconds = 60.0

    @Flag(help: "Run the relay with its admin listener and web history (--admin 127.0.0.1:0).")
    var admin = false

    @Flag(help: "Run the relay capturing every session (--capture into a temporary directory).")
    var capture = false

    @Option(help: "Another build's blipscope to run as the relay.")
    var relayBinary: String?

    func run() async throws {
        var benchmark = DensityBenchmark(sessions: max(1, sessions), pingSeconds: max(1, pingSeconds),
                                         idleSeconds: max(1, idleSeconds), relayBinary: relayBinary)
        if admin { benchmark.relayArguments += ["--admin", "127.0.0.1:0"] }
        var captureDirectory: URL?
        if capture {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-density-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            captureDirectory = directory
            benchmark.relayArguments += ["--capture", directory.path]
        }
        defer { captureDirectory.map { try? FileManager.default.removeItem(at: $0) } }
        try await benchmark.run()
    }
}
