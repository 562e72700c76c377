import Foundation

/// go-blip peers for `bench relay --goblip PATH`: Couchbase's Go BLIP library (the one Sync
/// Gateway speaks BLIP with) as the echo server and as the load generator, instead of the
/// benchmark's own Swift peers. `PATH` is a program over go-blip with two modes (built outside
/// this repository; docs/testing.md describes it):
/// - `serve --listen 127.0.0.1:0`: echoes every request's body, compressed as it came, and prints
///   `listening on 127.0.0.1:PORT` on standard error;
/// - `load --url URL --count N --size BYTES [--compress] --in-flight K`: one connection, N echo
///   requests, every reply checked; prints one JSON line (``LoadReport``).
struct GoBlipPeers {
    let path: String

    /// What one `load` run reports.
    struct LoadReport: Decodable {
        var sent: Int
        var ok: Int
        var mismatched: Int
        var errors: Int
        /// From before the dial to the last reply.
        var seconds: Double
        var p50_us: Double
        var p99_us: Double
    }

    /// A running go-blip echo server.
    final class Server {
        let process = Process()
        let port: Int

        init(path: String) throws {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["serve", "--listen", "127.0.0.1:0"]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            port = try ListenerAnnouncement.port(from: errors, of: process, within: 20, what: "goblip-peer serve")
        }

        func stop() {
            process.stopAndWait()
        }
    }

    /// Sends `count` copies of `workload`'s request through `port` with go-blip's client; fails
    /// unless every reply came back intact.
    func load(port: Int, workload: RelayBenchmark.Workload, count: Int, inFlight: Int) throws -> LoadReport {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["load", "--url", "ws://127.0.0.1:\(port)/db/_blipsync", "--count", String(count),
                             "--size", String(workload.request.body.readableBytes), "--in-flight", String(inFlight),
                             "--timeout", "600s"] + (workload.request.isCompressed ? ["--compress"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let report = try? JSONDecoder().decode(LoadReport.self, from: Data(line.utf8)) else {
            throw BenchError("goblip-peer load printed no report (exit status \(process.terminationStatus))")
        }
        guard report.ok == count else {
            throw BenchError("goblip-peer load: \(report.ok) of \(count) echoes intact (\(report.mismatched) mismatched, \(report.errors) errors)")
        }
        return report
    }
}
