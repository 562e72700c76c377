import CommandLineSupport
import Foundation
import Soak

/// `blipscope relay` run as a child process, so that its CPU time and memory can be read from
/// /proc apart from the benchmark's clients and echo server. The relay is the `blipscope`
/// executable beside this one (the same build) unless a `binary` is given.
final class RelayProcess {
    let process = Process()
    let port: Int

    convenience init(upstreamPort: Int, logFile: String, extraArguments: [String] = [], binary: String? = nil) throws {
        try self.init(arguments: ["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(upstreamPort)",
                                  "--log-file", logFile] + extraArguments, binary: binary)
    }

    /// The benchmark's own executable (for `forward`, the bare forwarder).
    static var benchExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The `blipscope` executable of this build: beside this one.
    static var relayExecutable: String {
        URL(fileURLWithPath: benchExecutable).deletingLastPathComponent().appendingPathComponent("blipscope").path
    }

    /// `blipscope` with `arguments` (which start with `relay` and listen on port 0).
    /// `launcher` runs it under another program (e.g. `valgrind --tool=callgrind`), and `binary`
    /// replaces it (another build's, or this benchmark's own for `forward`); `environment` adds to
    /// or replaces variables of this process's environment; `startupSeconds` bounds the wait for
    /// its address.
    init(arguments: [String], launcher: [String] = [], binary: String? = nil, environment: [String: String] = [:],
         startupSeconds: Double = 60) throws {
        let relayBinary = URL(fileURLWithPath: binary ?? Self.relayExecutable).resolvingSymlinksInPath()
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [relayBinary.path] + arguments
        } else {
            process.executableURL = relayBinary
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // The relay announces its bound address on standard error.
        port = try ListenerAnnouncement.port(from: errors, of: process, within: startupSeconds, what: "the relay")
    }

    /// User + system CPU seconds so far (``ProcessCPUClock``).
    var cpuSeconds: Double { ProcessCPUClock.cpuSeconds(of: process.processIdentifier) }

    /// A field of /proc/PID/status in KiB, e.g. VmRSS or VmHWM (peak).
    func memoryKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return 0 }
        return ProcessProbe.field(field, in: status) ?? 0
    }

    /// SIGINT, then SIGKILL if it has not ended within 30 seconds (said on standard error).
    func stop() {
        if !process.stopAndWait() {
            FileHandleOutput.standardError("\(process.executableURL?.lastPathComponent ?? "child") \(process.arguments?.first ?? "") (pid \(process.processIdentifier)) did not end on SIGINT within 30 s: killed")
        }
    }
}
