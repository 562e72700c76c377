import BLIPCore
import CommandLineSupport
import Foundation
import NIOCore
import NIOPosix

/// `blipscope-bench instructions`: the instructions the relay executes per round trip, counted by
/// Valgrind's callgrind (a count of user-space instructions, steady from run to run, unlike CPU
/// time; the kernel's work is not in it).
///
/// Each workload runs twice, in two fresh relay processes under callgrind: once with `n` round
/// trips and once with `2n`. Start-up, the handshake, warm-up and shutdown are the same in both,
/// so the difference of the two totals, divided by `n`, is what one more round trip costs.
struct InstructionBenchmark {
    /// The valgrind program.
    var valgrind: String
    /// The `blipscope` binary that runs the relay (another build's, to compare; this one by default).
    var relayBinary: String?
    var only: Set<Character> = ["A", "B", "C"]
    /// Multiplies each workload's `n` (``roundTrips(for:)``).
    var scale = 1.0
    /// Where callgrind writes its output files and the relay its log.
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-bench-instructions").path

    /// A callgrind run is some 50 times slower than a native one: the round trips counted per
    /// workload at scale 1.
    static func roundTrips(for workload: RelayBenchmark.Workload) -> Int {
        workload.roundTrips >= 1_000 ? 2_000 : 10
    }

    func run() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await BenchPeers.startEchoServer(group: group)
        print(BenchMachine.current().line)
        print("instructions bench: relay \(relayBinary ?? "(this build)") under \(valgrind) --tool=callgrind, echo server :\(server.localAddress.port!)")
        print("each workload in two fresh relays, n and 2n round trips; per round trip = (total(2n) − total(n)) / n")
        print("workload                              n      total(n)         total(2n)        instructions per round trip")
        for workload in RelayBenchmark.Workload.all where only.contains(workload.letter) {
            let n = max(1, Int(Double(Self.roundTrips(for: workload)) * scale))
            let once = try await count(workload, roundTrips: n, upstreamPort: server.localAddress.port!, group: group)
            let twice = try await count(workload, roundTrips: 2 * n, upstreamPort: server.localAddress.port!, group: group)
            print(workload.name.padded(to: 38), String(n).padded(to: 6), String(once).padded(to: 16), String(twice).padded(to: 16),
                  String(format: "%.0f", Double(twice - once) / Double(n)))
        }
        try await server.close()
        try await group.shutdownGracefully()
    }

    /// Total instructions of one relay process that forwarded `roundTrips` round trips of `workload`
    /// (after 50 of warm-up).
    private func count(_ workload: RelayBenchmark.Workload, roundTrips: Int, upstreamPort: Int,
                       group: EventLoopGroup) async throws -> UInt64 {
        let output = (directory as NSString).appendingPathComponent("callgrind.\(workload.letter).\(roundTrips).out")
        try? FileManager.default.removeItem(atPath: output)
        let launcher = [valgrind, "--tool=callgrind", "--callgrind-out-file=\(output)",
                        "--log-file=\((directory as NSString).appendingPathComponent("valgrind.log"))"]
        let relay = try RelayProcess(arguments: ["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(upstreamPort)",
                                                 "--log-file", (directory as NSString).appendingPathComponent("relay.log")],
                                     launcher: launcher, binary: relayBinary, environment: Self.copiesAsTheRelayDoes,
                                     startupSeconds: 300)
        do {
            let connection = try await BenchPeers.connect(port: relay.port, group: group)
            _ = try await BenchPeers.run(connection, request: workload.request, count: 50, inFlight: workload.inFlight)
            _ = try await BenchPeers.run(connection, request: workload.request, count: roundTrips, inFlight: workload.inFlight)
            try await connection.close()
        } catch {
            relay.stop()
            throw error
        }
        relay.stop()
        guard let text = try? String(contentsOfFile: output, encoding: .utf8), let total = Self.totalInstructions(in: text) else {
            throw BenchError("callgrind wrote no total to \(output) (exit status \(relay.process.terminationStatus))")
        }
        return total
    }

    /// The relay re-executes itself to set how glibc copies large blocks (``CopyTuning``), which
    /// Valgrind cannot follow; set beforehand, the same setting needs no re-execution, and any
    /// build (`--relay-binary`) copies as this one's relay does by default.
    static var copiesAsTheRelayDoes: [String: String] {
        guard CopyTuning.applies else { return [:] }
        let current = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]
        return CopyTuning.tunables(for: .vector, current: current).map { ["GLIBC_TUNABLES": $0] } ?? [:]
    }

    /// The program's total from a callgrind output file: its `totals:` line (or `summary:`, which
    /// older versions wrote), whose first number is the instructions executed (event `Ir`).
    static func totalInstructions(in callgrindOutput: String) -> UInt64? {
        for line in callgrindOutput.split(separator: "\n").reversed() {
            for prefix in ["totals:", "summary:"] where line.hasPrefix(prefix) {
                if let first = line.dropFirst(prefix.count).split(separator: " ").first, let value = UInt64(first) {
                    return value
                }
            }
        }
        return nil
    }

}
