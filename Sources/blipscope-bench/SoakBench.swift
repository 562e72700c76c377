import ArgumentParser
import Foundation
import Soak

struct SoakBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Soak: many sessions churning through a relay child (capture and admin on) to the echo server and the embedded gateway; lost, reordered, decode errors, relay RSS and descriptors; exits 1 on FAIL."
    )

    @Option(help: "Numbered echo messages in all (replication pulls come on top).")
    var messages = 10_000_000

    @Option(help: "Sessions open at once; each ends after its messages and a new one takes its place.")
    var sessions = 200

    @Option(help: "Most numbered messages per session.")
    var sessionMessages = 2_000

    @Option(help: "Seconds between readings of the relay's RSS and descriptors.")
    var sampleSeconds = 5.0

    @Option(help: "Seed for the choice of session kinds, sizes and compression.")
    var seed: UInt64 = 1

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        guard messages > 0, sessions > 0, sessionMessages > 0, sampleSeconds > 0 else {
            throw ValidationError("--messages, --sessions, --session-messages and --sample-seconds must be positive")
        }
    }

    func run() async throws {
        var configuration = SoakConfiguration()
        configuration.messages = messages
        configuration.sessions = sessions
        configuration.maxMessagesPerSession = sessionMessages
        configuration.sampleSeconds = sampleSeconds
        configuration.seed = seed
        var runner = SoakRunner(configuration: configuration)
        runner.status = { line in FileHandle.standardError.write(Data(("soak: " + line + "\n").utf8)) }
        let report = try await runner.run { launch in try SoakRelayProcess(launch: launch) }
        print(json ? try report.json() : report.text)
        if !report.passed { throw ExitCode(1) }
    }
}
