import BLIPCore
import BLIPNIO
import BLIPTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// `blipscope relay` logging to a reader that stops reading (standard output piped to a pager
/// left paused): the relay's traffic goes on; the log loses lines past `--log-backlog-kib` and
/// says how many where they went missing.
@Suite struct RelayLogBacklogTests {
    @Test("with its standard output never read, the relay still carries a session of 3,000 round trips, and the log, once read, counts the lines it dropped")
    func aStalledLogReaderDoesNotStopTraffic() async throws {
        let peers = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = try await RelayHarness.echoUpstream(group: peers)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-backlog-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("log").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Held open for reading, so the relay's open does not wait; read only at the end, to the
        // end of file that comes when the relay has exited.
        let log = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(log >= 0)
        defer { close(log) }
        let relay = try RunningCommand(
            executable: "/bin/sh",
            arguments: ["-c", "exec \"$0\" relay --listen 127.0.0.1:0 --upstream ws://127.0.0.1:$1 --log-backlog-kib 64 > \"$2\"",
                        try BlipscopeExecutable.url().path, "\(upstream.localAddress.port!)", fifo])
        defer { relay.kill() }
        let port = try await relay.announcedPort()

        let connection = try await RelayHarness.client(to: port, group: peers)
        // About 1 MB of message lines against a 64 KiB pipe and a 64 KiB backlog.
        let body = String(repeating: "{\"k\":\"v\"}", count: 30)
        let echoed = try await withTimeout(600) {
            var echoed = 0
            for _ in 0..<3_000 where String(buffer: try await connection.request(.request(profile: "echo", body: ByteBuffer(string: body))).body) == body {
                echoed += 1
            }
            return echoed
        }
        #expect(echoed == 3_000)
        try await connection.close()

        // Read now, while the relay stops: what it kept, and the end of the file once it has exited.
        async let reading = Self.readToEnd(log, within: 60)
        #expect(try await relay.stop() == 0, "\(relay.errors.text)")
        let text = try #require(await reading, "the log did not end")
        let lines = text.split(separator: "\n")
        let notices = lines.filter { $0.contains(" event=log-dropped ") }
        #expect(notices.allSatisfy { $0.contains(" limit=65536 ") })
        let dropped = notices.compactMap { notice in notice.range(of: " lines=").flatMap { Int(notice[$0.upperBound...].prefix { $0.isNumber }) } }
        let kept = lines.filter { $0.contains(" type=MSG ") || $0.contains(" type=RPY ") }.count
        #expect(dropped.reduce(0, +) > 1_000 && kept > 100, "\(dropped) dropped, \(kept) message lines written")
        // Every line is either written or counted: the 6,000 message lines, the session's open,
        // close and summary lines, and the stop's four drain lines (started, listener closed,
        // stopped at once by Ctrl-C, done).
        #expect(kept + dropped.reduce(0, +) + lines.filter { $0.contains(" event=") && !$0.contains("log-dropped") }.count == 6_007)
        try? await upstream.close()
        try await peers.shutdownGracefully()
    }

    /// Everything read from `descriptor` (non-blocking) up to its end of file, or nil if it has
    /// not ended within `seconds`.
    private static func readToEnd(_ descriptor: Int32, within seconds: Double) async -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                data.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return String(decoding: data, as: UTF8.self)
            } else {
                try? await Task.sleep(for: .milliseconds(5))  // EAGAIN: nothing yet, the relay still runs
            }
        }
        return nil
    }
}
