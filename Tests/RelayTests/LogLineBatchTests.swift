import BLIPCore
import BLIPNIO
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import Relay

/// A session's log lines reach the relay's sink once per input of the session (a read batch),
/// not once per message.
@Suite struct LogLineBatchTests {
    /// A sink that counts the calls it gets and keeps the bytes.
    final class CountingSink: LogLineSink, @unchecked Sendable {
        private let state = NIOLockedValueBox<(writes: Int, bytes: [UInt8])>((0, []))
        func write(lines: UnsafeRawBufferPointer) {
            state.withLockedValue { $0.writes += 1; $0.bytes.append(contentsOf: lines) }
        }
        var writes: Int { state.withLockedValue { $0.writes } }
        var lines: [Substring] {
            String(decoding: state.withLockedValue { $0.bytes }, as: UTF8.self).split(separator: "\n")
        }
    }

    @Test("lines wait in the batch until the input ends, and go at once past the hand-over size")
    func linesWaitForTheEndOfTheInput() {
        let sink = CountingSink()
        let batch = LogLineBatch(handingTo: sink)
        for line in ["a\n", "b\n"] { line.utf8CString.withUnsafeBytes { batch.write(lines: UnsafeRawBufferPointer(rebasing: $0.dropLast())) } }
        #expect(sink.writes == 0)
        batch.handOver()
        #expect(sink.writes == 1 && sink.lines == ["a", "b"])
        batch.handOver()
        #expect(sink.writes == 1, "an empty batch writes nothing")
        let long = [UInt8](repeating: 0x61, count: LogLineBatch.handOverBytes) + [0x0A]
        long.withUnsafeBytes { batch.write(lines: $0) }
        #expect(sink.writes == 2, "a batch at its size limit goes without waiting")
    }

    @Test("forty requests sent at once are logged, with their replies, in fewer sink writes than lines")
    func aReadBatchIsOneSinkWrite() async throws {
        let sink = CountingSink()
        // With a sink the logger only sets the level; its handler writes nothing.
        var logger = Logger(label: "batched") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        let harness = try await RelayHarness.start(observers: [LoggingObserver(logger: logger, sink: sink)])
        let connection = try await harness.connected()
        let replies = try await connection.onLoop { handler in
            (0..<40).map { _ in handler.sendRequest(.request(profile: "echo", body: ByteBuffer(string: "{}"))) }
        }
        for reply in replies { _ = try await withTimeout { try await reply.get() } }
        try await connection.close()
        _ = try await harness.recorder.sessionClosed()
        let messageLines = sink.lines.filter { $0.contains(" type=MSG ") || $0.contains(" type=RPY ") }
        #expect(messageLines.count == 80)
        #expect(sink.lines.contains { $0.contains("event=close") }, "the session's last lines are out when it closes")
        #expect(sink.writes < messageLines.count, "\(sink.writes) writes for \(messageLines.count) message lines")
        try await harness.shutdown()
    }
}
