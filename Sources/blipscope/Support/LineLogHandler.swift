import Dispatch
import Foundation
import Logging
import Relay

/// A swift-log handler that writes each message as one line, as it is: the relay's observers
/// already format their lines (text or JSON), so nothing is added but a newline.
///
/// Lines are collected in memory and written in batches — when ``Sink/batchBytes`` have
/// accumulated, every ``Sink/flushInterval`` (a line waits at most that long), and on
/// ``Sink/flush()`` at shutdown — so a busy relay does not make one system call per message.
///
/// The handler is one reference to immutable ``State``: swift-log copies the handler out of its
/// logger for every level check and every line, and such a copy only retains that reference.
/// Setting the level or metadata replaces the state (value semantics, as swift-log asks).
struct LineLogHandler: LogHandler {
    final class Sink: LogLineSink, @unchecked Sendable {
        /// Bytes that trigger an immediate write.
        static let batchBytes = 64 * 1024
        /// The longest a line waits in memory.
        static let flushInterval = DispatchTimeInterval.milliseconds(200)

        /// The lines and the file: the flush timer holds it, not the sink. (A `weak` reference to
        /// the sink would give it a side table, and every retain and release of it — one each per
        /// logged message — would take the runtime's slow path.)
        private let batch: Batch
        private let timer: DispatchSourceTimer

        init(descriptor: Int32, ownsDescriptor: Bool) {
            let batch = Batch(descriptor: descriptor, ownsDescriptor: ownsDescriptor)
            self.batch = batch
            timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + Self.flushInterval, repeating: Self.flushInterval)
            timer.setEventHandler { batch.flush() }
            timer.resume()
        }

        deinit {
            timer.cancel()
            batch.flush()
        }

        static let standardOutput = Sink(descriptor: STDOUT_FILENO, ownsDescriptor: false)

        static func appending(to path: String) throws -> Sink {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
            return Sink(descriptor: descriptor, ownsDescriptor: true)
        }

        func write(_ line: String) { batch.write(line) }

        /// Lines as bytes, newlines included (the relay's ``LoggingObserver`` writes here).
        func write(lines: UnsafeRawBufferPointer) { batch.write(lines: lines) }

        /// Writes everything collected so far.
        func flush() { batch.flush() }
    }

    /// A ``Sink``'s lines waiting in memory and the file they go to (closed when the last
    /// holder, the sink or its timer, lets go).
    private final class Batch: @unchecked Sendable {
        // The buffer is shared by every event loop thread: `lock` guards it; `writeLock` keeps
        // batches in order while one is written outside the buffer lock.
        private let lock = NSLock()
        private let writeLock = NSLock()
        /// Only touched under `lock`, so the runtime's exclusivity check is left out.
        @exclusivity(unchecked) private var pending: [UInt8] = []
        private let descriptor: Int32
        private let ownsDescriptor: Bool

        init(descriptor: Int32, ownsDescriptor: Bool) {
            self.descriptor = descriptor
            self.ownsDescriptor = ownsDescriptor
            pending.reserveCapacity(Sink.batchBytes * 2)
        }

        deinit {
            flush()
            if ownsDescriptor { close(descriptor) }
        }

        func write(_ line: String) {
            lock.lock()
            let full = Self.append(line, to: &pending)
            lock.unlock()
            if full { flush() }
        }

        func write(lines: UnsafeRawBufferPointer) {
            lock.lock()
            pending.append(contentsOf: lines)
            let full = pending.count >= Sink.batchBytes
            lock.unlock()
            if full { flush() }
        }

        /// Appends `line` and a newline; true once a batch is ready. Native strings (all on
        /// Linux) are copied as one block, others byte by byte.
        private static func append(_ line: String, to pending: inout [UInt8]) -> Bool {
            let copied: Void? = line.utf8.withContiguousStorageIfAvailable { pending.append(contentsOf: $0) }
            if copied == nil { pending.append(contentsOf: line.utf8) }
            pending.append(0x0A)
            return pending.count >= Sink.batchBytes
        }

        func flush() {
            writeLock.lock()
            defer { writeLock.unlock() }
            lock.lock()
            var batch: [UInt8] = []
            swap(&batch, &pending)
            pending.reserveCapacity(Sink.batchBytes * 2)
            lock.unlock()
            var offset = 0
            batch.withUnsafeBytes { bytes in
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
    }

    /// What a handler holds; never changed once made.
    final class State: Sendable {
        let sink: Sink
        let logLevel: Logger.Level
        let metadata: Logger.Metadata

        init(sink: Sink, logLevel: Logger.Level, metadata: Logger.Metadata) {
            self.sink = sink
            self.logLevel = logLevel
            self.metadata = metadata
        }
    }

    private var state: State

    init(sink: Sink, level: Logger.Level) {
        state = State(sink: sink, logLevel: level, metadata: [:])
    }

    var sink: Sink { state.sink }

    var logLevel: Logger.Level {
        get { state.logLevel }
        set { state = State(sink: state.sink, logLevel: newValue, metadata: state.metadata) }
    }

    var metadata: Logger.Metadata {
        get { state.metadata }
        set { state = State(sink: state.sink, logLevel: state.logLevel, metadata: newValue) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { state.metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        state.sink.write(event.message.description)
    }
}
