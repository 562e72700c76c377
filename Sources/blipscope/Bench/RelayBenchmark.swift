import BLIPCore
import BLIPNIO
import Foundation
import NIOCore
import NIOPosix

/// `blipscope bench relay`: the same workloads directly against an echo server and through a
/// `blipscope relay` child process (decoding every message and logging it to a file).
struct RelayBenchmark {
    var scale = 1.0
    var only: Set<Character> = ["A", "B", "C", "D", "E"]
    /// Extra arguments for the relay child (`--metrics` passes `--admin 127.0.0.1:0`).
    var relayArguments: [String] = []
    /// Also run every workload through Debian's nginx as a blind WebSocket proxy (``NginxProcess``).
    var nginx = false
    /// The relay runs with `--deny-profile` ``deniedProfile``; each relayed connection first sends
    /// one such request (answered by the relay with an ERR), so both directions are re-encoded.
    var mediate = false
    /// With ``mediate``: deny a compressed request, so the relay re-deflates every later
    /// compressed frame from the client (the costlier re-encoding).
    var denyCompressed = false
    static let deniedProfile = "bench-denied"
    var logFile = FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-bench-relay.log").path

    struct Throughput {
        var seconds: Double
        var latencies: [UInt64]
    }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await BenchPeers.startEchoServer(group: group)
        let upstreamPort = server.localAddress.port!
        try? FileManager.default.removeItem(atPath: logFile)
        let relay = try RelayProcess(upstreamPort: upstreamPort, logFile: logFile, extraArguments: relayArguments)
        print("relay bench: echo server :\(upstreamPort), relay :\(relay.port) (pid \(relay.process.processIdentifier)), log \(logFile)")
        print("workload                              direct msg/s  relay msg/s  ratio  relay MB/s  relay CPU s/10k RT")
        defer { relay.stop() }
        let proxy = nginx ? try NginxProcess(upstreamPort: upstreamPort) : nil
        defer { proxy?.stop() }

        let small = Self.body(300)
        let workloads: [(String, BLIPMessage, Int, Int)] = [
            ("A  300 B echo, 8 in flight", .request(profile: "echo", body: small), count(20_000), 8),
            ("B  300 B echo compressed, 8 in flight", .request(profile: "echo", body: small, compressed: true), count(20_000), 8),
            ("C  1 MiB echo compressed, 4 in flight", .request(profile: "echo", body: Self.body(1 << 20), compressed: true), count(200), 4),
        ]
        for (name, request, total, inFlight) in workloads where only.contains(name.first!) {
            let direct = try await measure(port: upstreamPort, request: request, count: total, inFlight: inFlight, group: group)
            let cpuBefore = relay.cpuSeconds
            let relayed = try await measure(port: relay.port, request: request, count: total, inFlight: inFlight, group: group,
                                            denyFirst: mediate)
            let cpu = relay.cpuSeconds - cpuBefore
            let directRate = Double(total) / direct.seconds
            let relayRate = Double(total) / relayed.seconds
            let megabytes = Double(total * request.body.readableBytes * 2) / relayed.seconds / 1e6
            print(pad(name, 38), pad(format(directRate), 13), pad(format(relayRate), 12),
                  pad(String(format: "%.2f", relayRate / directRate), 6), pad(String(format: "%.1f", megabytes), 11),
                  String(format: "%.3f", cpu / Double(total) * 10_000))
            if let proxy {
                let cpuBefore = proxy.cpuSeconds
                let proxied = try await measure(port: proxy.port, request: request, count: total, inFlight: inFlight, group: group)
                let cpu = proxy.cpuSeconds - cpuBefore
                let rate = Double(total) / proxied.seconds
                print(pad("   same through nginx", 38), pad("", 13), pad(format(rate), 12),
                      pad(String(format: "%.2f", rate / directRate), 6),
                      pad(String(format: "%.1f", Double(total * request.body.readableBytes * 2) / proxied.seconds / 1e6), 11),
                      String(format: "%.3f", cpu / Double(total) * 10_000))
            }
        }
        print("relay peak RSS so far: \(relay.memoryKiB("VmHWM") / 1024) MiB")
        if only.contains("D") { try await latency(relay: relay, upstreamPort: upstreamPort, group: group) }
        if only.contains("D"), let proxy { try await latency(relay: relay, upstreamPort: upstreamPort, group: group, via: proxy.port) }
        if only.contains("E") { try await idleSessions(relay: relay, group: group) }
        try await server.close()
        try await group.shutdownGracefully()
    }

    /// D: sequential small requests, added round-trip latency.
    /// With `via`, the same through that proxy port (nginx) instead of the relay.
    private func latency(relay: RelayProcess, upstreamPort: Int, group: EventLoopGroup, via proxyPort: Int? = nil) async throws {
        let request = BLIPMessage.request(profile: "echo", body: Self.body(64))
        let direct = try await measure(port: upstreamPort, request: request, count: count(2_000), inFlight: 1, group: group)
        let relayed = try await measure(port: proxyPort ?? relay.port, request: request, count: count(2_000), inFlight: 1, group: group)
        let (d50, d99) = percentiles(direct.latencies)
        let (r50, r99) = percentiles(relayed.latencies)
        let name = proxyPort == nil ? "relay" : "nginx"
        print(String(format: "D  sequential RTT µs: direct p50 %.0f p99 %.0f, \(name) p50 %.0f p99 %.0f, added p50 %.0f p99 %.0f",
                     d50, d99, r50, r99, r50 - d50, r99 - d99))
    }

    /// E: idle sessions, relay memory per session.
    private func idleSessions(relay: RelayProcess, group: EventLoopGroup) async throws {
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

    private func count(_ base: Int) -> Int { max(1, Int(Double(base) * scale)) }

    private func measure(port: Int, request: BLIPMessage, count: Int, inFlight: Int,
                         group: EventLoopGroup, denyFirst: Bool = false) async throws -> Throughput {
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

    private func percentiles(_ nanos: [UInt64]) -> (Double, Double) {
        let sorted = nanos.sorted()
        func at(_ fraction: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1000 }
        return (at(0.5), at(0.99))
    }

    private func format(_ rate: Double) -> String { String(format: "%.0f", rate) }
    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

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
