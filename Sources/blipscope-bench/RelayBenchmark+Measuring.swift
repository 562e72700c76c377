import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOPosix
import Relay

extension RelayBenchmark {
    /// D: sequential small requests, added round-trip latency.
    /// With `via`, the same through that proxy port (nginx) instead of the relay. `label` names the
    /// placement the line was measured in.
    func latency(relay: RelayProcess, upstreamPort: Int, group: EventLoopGroup, via proxyPort: Int? = nil,
                         label: String) async throws {
        let workload = Workload(letter: "D", name: "D", request: .request(profile: "echo", body: Self.body(64)),
                                roundTrips: 2_000, inFlight: 1)
        var direct: [Throughput] = []
        var relayed: [Throughput] = []
        for round in 0..<rounds {
            for viaProxy in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                let port = viaProxy ? proxyPort ?? relay.port : upstreamPort
                let result = try await measure(port: port, workload: workload, count: count(2_000), inFlight: 1, group: group)
                if viaProxy { relayed.append(result) } else { direct.append(result) }
            }
        }
        let (d50, d99) = percentiles(direct)
        let (r50, r99) = percentiles(relayed)
        let name = proxyPort == nil ? "relay" : "nginx"
        print(String(format: "D  (\(label)) sequential RTT µs: direct p50 %.0f p99 %.0f, \(name) p50 %.0f p99 %.0f, added p50 %.0f p99 %.0f",
                     d50, d99, r50, r99, r50 - d50, r99 - d99))
    }

    /// E: idle sessions, relay memory per session.
    func idleSessions(relay: RelayProcess, group: EventLoopGroup) async throws {
        let request = BLIPMessage.request(profile: "echo", body: Self.body(64))
        let idleCount = count(1_000)
        let before = relay.memoryKiB("VmRSS")
        var idle: [BLIPConnection] = []
        for _ in 0..<idleCount { idle.append(try await BenchPeers.connect(port: relay.port, group: group)) }
        // One round trip on the last session so every session before it is surely set up.
        _ = try await BenchPeers.run(idle[idle.count - 1], request: request, count: 1, inFlight: 1)
        let after = relay.memoryKiB("VmRSS")
        print(String(format: "E  %d idle sessions: relay RSS %d → %d MiB, %.1f KiB per session", idleCount,
                     before / 1024, after / 1024, Double(after - before) / Double(idleCount)))
        for connection in idle { try? await connection.close() }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count.isMultiple(of: 2)
            ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }

    func count(_ base: Int) -> Int { max(1, Int(Double(base) * scale)) }

    func measure(port: Int, workload: Workload, count: Int, inFlight: Int,
                         group: EventLoopGroup, denyFirst: Bool = false) async throws -> Throughput {
        if let goBlip {
            // go-blip's load is a process of its own (its run includes the dial and handshake).
            let report = try goBlip.load(port: port, workload: workload, count: count, inFlight: inFlight)
            return Throughput(seconds: report.seconds, latencies: [], percentiles: (report.p50_us, report.p99_us))
        }
        let request = workload.request
        let connection = try await BenchPeers.connect(port: port, group: group)
        if denyFirst {
            let answer = try await connection.request(.request(profile: Self.deniedProfile, body: ByteBuffer(string: "x"),
                                                               compressed: denyCompressed))
            guard answer.type == .error else { throw BenchError("--mediate: the relay did not deny the first request") }
        }
        // Warm up the connection (codecs, buffers) before timing.
        _ = try await BenchPeers.run(connection, request: request, count: min(count, 50), inFlight: inFlight)
        let start = DispatchTime.now().uptimeNanoseconds
        let latencies = try await BenchPeers.run(connection, request: request, count: count, inFlight: inFlight)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        try await connection.close()
        return Throughput(seconds: seconds, latencies: latencies)
    }

    /// p50 and p99 in microseconds: of every round trip of the runs, or, when go-blip measured,
    /// the medians of its runs' own percentiles.
    func percentiles(_ runs: [Throughput]) -> (Double, Double) {
        if runs.contains(where: { $0.percentiles != nil }) {
            let reported = runs.compactMap(\.percentiles)
            return (Self.median(reported.map(\.p50)), Self.median(reported.map(\.p99)))
        }
        let sorted = runs.flatMap(\.latencies).sorted()
        func at(_ fraction: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1000 }
        return (at(0.5), at(0.99))
    }

    func format(_ rate: Double) -> String { String(format: "%.0f", rate) }

    /// A JSON-ish body of `size` bytes that compresses like documents do.
    static func body(_ size: Int) -> ByteBuffer {
        var text = ""
        var index = 0
        while text.utf8.count < size {
            text += "{\"_id\":\"doc-\(index)\",\"type\":\"order\",\"qty\":\(index % 97),\"channels\":[\"c\(index % 7)\"]},"
            index += 1
        }
        return ByteBuffer(string: String(text.utf8.prefix(size))!)
    }
}
