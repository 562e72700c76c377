import BLIPTestSupport
import Foundation

/// go-blip, Couchbase's Go BLIP library (the one Sync Gateway speaks BLIP with), as a peer.
/// Opt-in: `BLIPSCOPE_GOBLIP_PEER` names a binary built from public source outside this
/// repository, with two modes:
/// - `serve --listen 127.0.0.1:0`: a BLIP WebSocket server (go-blip's own handler) that answers
///   every request wanting a reply with its body, compressed as the request was; it prints
///   `listening on 127.0.0.1:PORT` on standard error;
/// - `load --url URL --count N --size BYTES [--compress] [--in-flight K]`: one go-blip client
///   connection sending N `echo` requests (each with a `seq` property, its index) and checking
///   every reply's body; it prints one JSON line (``LoadReport``).
enum GoBlipPeer {
    static let path = ProcessInfo.processInfo.environment["BLIPSCOPE_GOBLIP_PEER"]
    static var available: Bool { path.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    /// What `load` reports.
    struct LoadReport: Decodable, CustomStringConvertible {
        var sent: Int
        var ok: Int
        var mismatched: Int
        /// Requests answered with an ERR (or not answered at all).
        var errors: Int
        var seconds: Double

        var description: String { "sent \(sent), ok \(ok), mismatched \(mismatched), errors \(errors)" }
    }

    /// A running go-blip echo server and its port; with `subprotocol`, it speaks only that one.
    static func serve(subprotocol: String? = nil) async throws -> (server: RunningCommand, port: Int) {
        let server = try RunningCommand(executable: path!, arguments: ["serve", "--listen", "127.0.0.1:0"]
                                            + (subprotocol.map { ["--protocol", $0] } ?? []))
        do {
            return (server, try await server.announcedPort(within: 30))
        } catch {
            server.kill()
            throw error
        }
    }

    /// Runs one go-blip client connection to `url` (bounded: `seconds`). With `subprotocols`,
    /// go-blip tries each in turn, one handshake each, until one is accepted.
    static func load(_ url: String, count: Int, size: Int, compress: Bool, inFlight: Int,
                     subprotocols: [String] = [], seconds: Double = 120) async throws -> LoadReport {
        var arguments = ["load", "--url", url, "--count", String(count), "--size", String(size),
                         "--in-flight", String(inFlight), "--timeout", "\(Int(seconds))s"]
        if compress { arguments.append("--compress") }
        if !subprotocols.isEmpty { arguments += ["--protocol", subprotocols.joined(separator: ",")] }
        let finished = try await RunningCommand.run(path!, arguments, within: seconds + 10)
        guard let line = finished.output.split(separator: "\n").last,
              let report = try? JSONDecoder().decode(LoadReport.self, from: Data(line.utf8)) else {
            throw CommandFailure("goblip-peer load printed no report (status \(finished.status)): \(finished.output) \(finished.errors)")
        }
        return report
    }
}
