import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// `blipscope-bench forward`, the bare SwiftNIO forwarder, and `blipscope-bench relay --floor`, which measures the
/// relay's CPU against it.
@Suite struct BenchFloorTests {
    @Test("a BLIP session through the bare forwarder gets every echo, compressed or not, byte for byte")
    func forwarderCarriesABLIPSession() async throws {
        let peers = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = try await RelayHarness.echoUpstream(group: peers)
        let forwarder = try BlipscopeExecutable.startBench(["forward", "--upstream-port", "\(upstream.localAddress.port!)",
                                                      "--threads", "1"])
        let port = try await forwarder.announcedPort()

        let connection = try await RelayHarness.client(to: port, group: peers)
        // Bodies large enough to take several reads and writes on each side.
        for (index, size) in [1, 300, 70_000, 1 << 20].enumerated() {
            let body = String(repeating: "{\"seq\":\(index)}", count: max(1, size / 10))
            let reply = try await withTimeout {
                try await connection.request(.request(profile: "echo", body: ByteBuffer(string: body), compressed: index.isMultiple(of: 2)))
            }
            #expect(String(buffer: reply.body) == body, "echo \(index) of \(body.utf8.count) bytes")
        }
        try await connection.close()
        _ = try await forwarder.stop()  // SIGINT, as the bench ends it; throws if it does not end
        try? await upstream.close()
        try await peers.shutdownGracefully()
    }

    @Test("the forwarder ends on SIGINT even when started with SIGINT ignored, as a script's background job is")
    func forwarderEndsOnSIGINTThatItsParentIgnored() async throws {
        let peers = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = try await BLIPWebSocketServer.start(BLIPWebSocketServer.Configuration(), group: peers)
        // `trap '' INT` ignores SIGINT and `exec` keeps it ignored in the forwarder (same pid).
        let forwarder = try RunningCommand(
            executable: "/bin/sh",
            arguments: ["-c", "trap '' INT; exec \"$0\" forward --threads 1 --upstream-port \"$1\"",
                        try BlipscopeExecutable.url("blipscope-bench").path, "\(upstream.localAddress.port!)"])
        defer { forwarder.kill() }
        _ = try await forwarder.announcedPort()
        let status = try await forwarder.stop(SIGINT, within: 30)  // throws if it does not end
        #expect(status == 0, "\(forwarder.errors.text)")
        try? await upstream.close()
        try await peers.shutdownGracefully()
    }

    @Test("bench relay --floor reports the forwarder's and the undecoding relay's lines and the relay's CPU against each: the rounds' median, their range and the totals")
    func relayBenchReportsTheFloor() async throws {
        let finished = try await BlipscopeExecutable.runBench(
            ["relay", "--floor", "--placement", "free", "--rounds", "2", "--scale", "0.25", "--only", "A"], within: 900)
        #expect(finished.status == 0, "\(finished.errors)")
        let lines = finished.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("bare NIO forwarder :") })
        // Every path carried an untimed tenth of the workload before the rounds.
        #expect(lines.contains { $0.contains("alternating after an untimed tenth on each path") }, "\(finished.output)")
        let floor = try #require(lines.first { $0.hasPrefix("   same through a bare NIO forwarder") }, "\(finished.output)")
        // msg/s, ratio, MB/s, CPU: numbers, the rate above zero.
        let numbers = floor.split(separator: " ").compactMap { Double($0) }
        #expect(numbers.count >= 3 && numbers[0] > 0, "\(floor)")
        #expect(lines.contains { $0.hasPrefix("relay --no-decode :") })
        let undecoded = try #require(lines.first { $0.hasPrefix("   same through the relay, --no-decode") }, "\(finished.output)")
        let undecodedNumbers = undecoded.split(separator: " ").compactMap { Double($0) }
        #expect(undecodedNumbers.count >= 3 && undecodedNumbers[0] > 0, "\(undecoded)")
        for prefix in ["   bare NIO forwarder: relay CPU ", "   relay --no-decode: relay CPU "] {
            let against = try #require(lines.first { $0.hasPrefix(prefix) }, "\(finished.output)")
            // `relay CPU 1.31× (rounds 1.22–1.40; totals 1.33×) of it`: the median of the rounds'
            // ratios, their range, and the ratio of the totals; the median and the totals' ratio (a
            // weighted mean of the rounds') lie within the range.
            let figures = against.split(whereSeparator: { " ×()–;".contains($0) }).compactMap { Double($0) }
            #expect(figures.count == 4, "\(against)")
            if figures.count == 4 {
                let (median, lowest, highest, totals) = (figures[0], figures[1], figures[2], figures[3])
                #expect(lowest <= median + 0.005 && median <= highest + 0.005, "\(against)")
                #expect(lowest <= totals + 0.005 && totals <= highest + 0.005, "\(against)")
            }
        }
        // The undecoding relay logged its sessions and no message.
        let log = try String(contentsOfFile: FileManager.default.temporaryDirectory
            .appendingPathComponent("blipscope-bench-relay.log.no-decode").path, encoding: .utf8)
        #expect(log.contains("event=open") && !log.contains(" type=MSG"), "\(log.prefix(500))")
    }
}
