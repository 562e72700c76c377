import Foundation
import Testing
@testable import CommandLineSupport
import Relay

/// The relay's log sink writes on a thread of its own: a reader that stops reading costs log
/// lines, counted where they went missing, never the threads that log.
@Suite struct LogSinkTests {
    /// A pipe whose read end the test reads only when it chooses.
    final class StalledPipe: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw CocoaError(.fileWriteUnknown) }
            (readEnd, writeEnd) = (ends[0], ends[1])
        }

        /// Reads until the write end is closed.
        func readAll() -> String {
            var data = Data()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                data.append(contentsOf: chunk[0..<count])
            }
            close(readEnd)
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Writes `count` numbered lines of about 100 bytes on a thread of its own; true when every
    /// write returned within `seconds`.
    private func writeLines(_ count: Int, to sink: LineLogHandler.Sink, within seconds: Double) async -> Bool {
        await onThread(within: seconds) {
            for number in 0..<count {
                var line = "line=\(number) " + String(repeating: "x", count: 90) + "\n"
                line.withUTF8 { sink.write(lines: UnsafeRawBufferPointer($0)) }
            }
            return true
        } ?? false
    }

    @Test("a reader that stops reading: every write returns, the lines past the backlog are dropped and counted where they went missing, and the rest arrive whole and in order",
          arguments: [RelayConfiguration.LogFormat.text, .json])
    func aStalledReaderCostsLinesNotTheWriters(format: RelayConfiguration.LogFormat) async throws {
        let pipe = try StalledPipe()
        let written = 20_000  // about 2 MB, against a 64 KiB pipe and a 128 KiB backlog
        var sink: LineLogHandler.Sink? = LineLogHandler.Sink(descriptor: pipe.writeEnd, ownsDescriptor: true,
                                                             format: format, backlogLimit: 128 * 1024)
        #expect(await writeLines(written, to: sink!, within: 30), "a write waited for the reader")
        // Now the reader reads; the sink's last lines go out as it lets go (it owns the write end).
        async let reading = onThread(within: 30) { pipe.readAll() }
        sink = nil
        let text = try #require(await reading, "the sink let go of the pipe")
        var next = 0, dropped = 0, notices = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("line=") {
                let number = try #require(Int(line.dropFirst(5).prefix { $0 != " " }), "a whole line: \(line.prefix(40))")
                #expect(number == next, "line \(number) came where \(next) was due")
                #expect(line.utf8.count == "line=\(number) ".utf8.count + 90)
                next = number + 1
                continue
            }
            notices += 1
            let counted = try #require(Self.droppedLines(in: String(line), format: format), "not a log line: \(line.prefix(80))")
            next += counted
            dropped += counted
        }
        #expect(next == written, "every line arrived or was counted")
        #expect(notices >= 1 && dropped > 0, "the lines the stalled reader could not take were counted")
        #expect(dropped < written - 1_000, "only what the pipe and the backlog could not hold was dropped")
    }

    @Test("flush waits for a reader that does not read only as long as it is told, and says so")
    func flushIsBounded() async throws {
        let pipe = try StalledPipe()
        let sink = LineLogHandler.Sink(descriptor: pipe.writeEnd, ownsDescriptor: false, backlogLimit: 1 << 20)
        // 200 KB: more than the pipe holds.
        #expect(await writeLines(2_000, to: sink, within: 30), "a write waited for the reader")
        #expect(await onThread(within: 30) { sink.flush(waitingAtMost: .milliseconds(300)) } == false)
        async let reading = onThread(within: 30) { pipe.readAll() }
        #expect(await onThread(within: 30) { sink.flush(waitingAtMost: .seconds(30)) } == true, "once read, everything is written")
        close(pipe.writeEnd)
        let text = try #require(await reading)
        #expect(text.split(separator: "\n").count == 2_000)
    }

    /// The count in an `event=log-dropped` line, text or JSON.
    static func droppedLines(in line: String, format: RelayConfiguration.LogFormat) -> Int? {
        switch format {
        case .text:
            guard line.contains(" event=log-dropped "), let range = line.range(of: " lines=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        case .json:
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "log-dropped", object["limit"] as? Int == 128 * 1024 else { return nil }
            return object["lines"] as? Int
        }
    }

    /// Runs `body`, which blocks, on a thread of its own: its result, or nil after `seconds`.
    private func onThread<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { continuation in
            let once = Once(continuation)
            Thread.detachNewThread { once.resume(body()) }
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: seconds)
                once.resume(nil)
            }
        }
    }

    final class Once<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<T?, Never>?
        init(_ continuation: CheckedContinuation<T?, Never>) { self.continuation = continuation }
        func resume(_ value: T?) {
            lock.lock()
            let taken = continuation
            continuation = nil
            lock.unlock()
            taken?.resume(returning: value)
        }
    }
}
