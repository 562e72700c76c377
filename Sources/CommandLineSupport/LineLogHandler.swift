import Dispatch
import Foundation
import Logging
import Relay

/// A swift-log handler that writes each message as one line, as it is: the relay's observers
/// already format their lines (text or JSON), so nothing is added but a newline.
///
/// Lines are collected in memory and written in batches by one writer thread of the sink's own,
/// never by the threads that log (the relay's event loops): when ``Sink/batchBytes`` have
/// accumulated, every ``Sink/flushInterval`` (a line waits at most that long), and on
/// ``Sink/flush(waitingAtMost:)`` — so a busy relay does not make one system call per message, and
/// a log whose reader stops reading (standard output piped to a pager left paused, a stalled disk)
/// cannot stop the relay's traffic. Lines wait for the writer up to a backlog of bytes (the sink's
/// `backlogLimit`, ``Sink/defaultBacklogLimit`` unless given);
/// past it they are dropped and counted, and the writer writes an `event=log-dropped` line where
/// they would have been, as a packet capture reports packets it dropped.
///
/// The handler is one reference to immutable ``State``: swift-log copies the handler out of its
/// logger for every level check and every line, and such a copy only retains that reference.
/// Setting the level or metadata replaces the state (value semantics, as swift-log asks).
public struct LineLogHandler: LogHandler {
    public final class Sink: LogLineSink, @unchecked Sendable {
        /// Bytes that wake the writer at once.
        public static let batchBytes = 64 * 1024
        /// The longest a line waits in memory.
        public static let flushInterval = DispatchTimeInterval.milliseconds(200)
        /// The default backlog: 8 MiB, about five seconds of a relay logging 10,000 messages a
        /// second.
        public static let defaultBacklogLimit = 8 << 20
        /// The longest ``flush(waitingAtMost:)`` waits by default, at exit, for a reader that
        /// stopped reading.
        public static let defaultFlushWait = DispatchTimeInterval.seconds(2)

        /// The lines and the file: the flush timer holds it, not the sink. (A `weak` reference to
        /// the sink would give it a side table, and every retain and release of it — one each per
        /// logged message — would take the runtime's slow path.)
        private let batch: Batch
        private let timer: DispatchSourceTimer

        /// `format` is what the `event=log-dropped` line is written in. `backlogLimit`: bytes of
        /// lines that may wait for the writer; a line that would go past is dropped. With the batch
        /// being written, the sink holds at most twice this.
        public init(descriptor: Int32, ownsDescriptor: Bool, format: RelayConfiguration.LogFormat = .text,
             backlogLimit: Int = Sink.defaultBacklogLimit) {
            let batch = Batch(descriptor: descriptor, ownsDescriptor: ownsDescriptor, backlogLimit: max(backlogLimit, 1)) { lines, bytes, limit in
                format.logDroppedLine(lines: lines, bytes: bytes, limit: limit)
            }
            self.batch = batch
            timer = DispatchSource.makeTimerSource(queue: batch.writer)
            timer.schedule(deadline: .now() + Self.flushInterval, repeating: Self.flushInterval)
            timer.setEventHandler { batch.writeOut() }
            timer.resume()
        }

        deinit {
            timer.cancel()
            _ = batch.flush(waitingAtMost: Self.defaultFlushWait)
        }

        public static func standardOutput(format: RelayConfiguration.LogFormat = .text, backlogLimit: Int = defaultBacklogLimit) -> Sink {
            Sink(descriptor: STDOUT_FILENO, ownsDescriptor: false, format: format, backlogLimit: backlogLimit)
        }

        public static func appending(to path: String, format: RelayConfiguration.LogFormat = .text,
                              backlogLimit: Int = defaultBacklogLimit) throws -> Sink {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            return Sink(descriptor: descriptor, ownsDescriptor: true, format: format, backlogLimit: backlogLimit)
        }

        public func write(_ line: String) { batch.write(line) }

        /// Lines as bytes, newlines included (the relay's ``LoggingObserver`` writes here).
        public func write(lines: UnsafeRawBufferPointer) { batch.write(lines: lines) }

        /// Writes everything collected so far and waits until it is written, at most `wait`;
        /// false if the writer was still blocked then (its reader is not reading).
        @discardableResult
        public func flush(waitingAtMost wait: DispatchTimeInterval = Sink.defaultFlushWait) -> Bool {
            batch.flush(waitingAtMost: wait)
        }
    }

    /// A ``Sink``'s lines waiting in memory, the file they go to (closed when the last holder, the
    /// sink or its timer, lets go) and the one thread that writes it.
    private final class Batch: @unchecked Sendable {
        /// Serial: the only thread that writes the file, so batches go out in order.
        let writer = DispatchQueue(label: "blipscope.log-writer", qos: .utility)
        // The buffer is shared by every event loop thread and the writer: `lock` guards it and
        // the counts below, and is never held across a write.
        private let lock = NSLock()
        /// Only touched under `lock`, so the runtime's exclusivity check is left out.
        @exclusivity(unchecked) private var pending: [UInt8] = []
        /// Lines dropped, and their bytes, since the writer last took the pending lines.
        @exclusivity(unchecked) private var droppedLines = 0
        @exclusivity(unchecked) private var droppedBytes = 0
        /// True from a full batch's wake-up of the writer until it takes the lines: a busy log
        /// wakes it once per batch, not once per line.
        @exclusivity(unchecked) private var writeOutQueued = false
        private let descriptor: Int32
        private let ownsDescriptor: Bool
        private let backlogLimit: Int
        private let droppedLine: @Sendable (_ lines: Int, _ bytes: Int, _ limit: Int) -> String

        init(descriptor: Int32, ownsDescriptor: Bool, backlogLimit: Int,
             droppedLine: @escaping @Sendable (_ lines: Int, _ bytes: Int, _ limit: Int) -> String) {
            self.descriptor = descriptor
            self.ownsDescriptor = ownsDescriptor
            self.backlogLimit = backlogLimit
            self.droppedLine = droppedLine
            pending.reserveCapacity(min(Sink.batchBytes * 2, backlogLimit))
        }

        deinit {
            // Nothing else holds the batch, so nothing is queued on the writer: write here.
            writeOut()
            if ownsDescriptor { close(descriptor) }
        }

        func write(_ line: String) {
            var line = line
            line.append("\n")
            line.withUTF8 { write(lines: UnsafeRawBufferPointer($0)) }
        }

        func write(lines: UnsafeRawBufferPointer) {
            lock.lock()
            guard pending.count + lines.count <= backlogLimit else {
                droppedLines += Self.lineCount(lines)
                droppedBytes += lines.count
                lock.unlock()
                return
            }
            pending.append(contentsOf: lines)
            let wake = pending.count >= Sink.batchBytes && !writeOutQueued
            if wake { writeOutQueued = true }
            lock.unlock()
            if wake { writer.async { self.writeOut() } }
        }

        /// On ``writer``: writes the lines collected so far, then the dropped-lines line if lines
        /// were dropped since the last time (they came after those lines and before any later).
        func writeOut() {
            lock.lock()
            var lines: [UInt8] = []
            swap(&lines, &pending)
            if !lines.isEmpty { pending.reserveCapacity(min(Sink.batchBytes * 2, backlogLimit)) }
            let dropped = (lines: droppedLines, bytes: droppedBytes)
            droppedLines = 0
            droppedBytes = 0
            writeOutQueued = false
            lock.unlock()
            write(lines)
            if dropped.lines > 0 { write(Array((droppedLine(dropped.lines, dropped.bytes, backlogLimit) + "\n").utf8)) }
        }

        /// Has the writer write out what is collected; waits at most `wait` for it.
        func flush(waitingAtMost wait: DispatchTimeInterval) -> Bool {
            let written = DispatchSemaphore(value: 0)
            writer.async {
                self.writeOut()
                written.signal()
            }
            return written.wait(timeout: .now() + wait) == .success
        }

        private func write(_ bytes: [UInt8]) {
            var offset = 0
            bytes.withUnsafeBytes { bytes in
                while offset < bytes.count {
                    let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }

        private static func lineCount(_ lines: UnsafeRawBufferPointer) -> Int {
            var count = 0
            for byte in lines where byte == 0x0A { count += 1 }
            return max(count, 1)
        }
    }

    /// What a handler holds; never changed once made.
    public final class State: Sendable {
        public let sink: Sink
        public let logLevel: Logger.Level
        public let metadata: Logger.Metadata

        public init(sink: Sink, logLevel: Logger.Level, metadata: Logger.Metadata) {
            self.sink = sink
            self.logLevel = logLevel
            self.metadata = metadata
        }
    }

    private var state: State

    public init(sink: Sink, level: Logger.Level) {
        state = State(sink: sink, logLevel: level, metadata: [:])
    }

    public var sink: Sink { state.sink }

    public var logLevel: Logger.Level {
        get { state.logLevel }
        set { state = State(sink: state.sink, logLevel: newValue, metadata: state.metadata) }
    }

    public var metadata: Logger.Metadata {
        get { state.metadata }
        set { state = State(sink: state.sink, logLevel: state.logLevel, metadata: newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { state.metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        state.sink.write(event.message.description)
    }
}
