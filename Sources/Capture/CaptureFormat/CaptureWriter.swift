import Foundation
import NIOCore

/// Streams the records of one session to capture files (see ``CaptureFileHeader`` for the
/// format), append-only, through a bounded in-memory buffer.
///
/// - Records are encoded into the buffer at once; bytes reach the file on ``flush()``, which
///   ``write(_:)`` calls itself once ``Options/flushThresholdBytes`` or
///   ``Options/flushThresholdRecords`` is reached, and ``close()`` calls last. A crash or
///   `kill -9` loses at most what was buffered; the file stays readable up to there, since every
///   record is framed with its length and CRC.
/// - ``tryWrite(_:)`` never does I/O: it buffers, or reports that the record would push the
///   buffer past ``Options/maxBufferedBytes`` so its caller can apply back-pressure or drop and
///   count (then record the count with ``CaptureRecord/dropped(_:)``). A background task calls
///   ``flush()``.
/// - Thread-safe: appends and flushes may come from different threads. Appends never wait for
///   a flush's I/O; flushes are serialised, so records reach the file in the order buffered.
/// - With a ``CaptureRotation`` limit, a flush that leaves the file at or over the limit moves on
///   to the next part.
public final class CaptureWriter: @unchecked Sendable {
    public struct Options: Sendable, Hashable {
        /// The buffer never grows beyond this through ``tryWrite(_:)`` (one oversized record
        /// excepted, when the buffer is empty).
        public var maxBufferedBytes: Int = 4 << 20
        /// ``write(_:)`` flushes once this many bytes are buffered…
        public var flushThresholdBytes: Int = 256 << 10
        /// …or this many records.
        public var flushThresholdRecords: Int = 4096
        /// `fsync` after each flush: survives power loss, not only crashes; much slower.
        public var syncOnFlush = false

        public init() {}
        public static let `default` = Options()
    }

    /// What ``tryWrite(_:)`` did.
    public enum TryWriteResult: Sendable, Hashable {
        /// The record is buffered; `flushDue` when a flush threshold has been reached.
        case buffered(flushDue: Bool)
        /// Nothing was buffered: the record would exceed ``Options/maxBufferedBytes``.
        case wouldExceedBuffer
    }

    public struct Statistics: Sendable, Hashable {
        public var recordsBuffered = 0
        public var bytesWritten: Int64 = 0
        /// Bytes in the current file, header included.
        public var currentFileBytes: Int64 = 0
        public var currentPath: String
        public var filesCreated = 0
        public var flushes = 0
    }

    public let options: Options
    public let sessionID: UInt64
    private let rotation: CaptureRotation?

    private let stateLock = NSLock()
    private var pending = ByteBuffer()
    /// The previous flush's buffer, emptied, kept for reuse.
    private var spare: ByteBuffer?
    private var pendingRecords = 0
    private var pendingHandshake: ByteBuffer?
    private var closed = false
    private var stats: Statistics

    /// Held for the whole of a flush, so flushes keep their order.
    private let ioLock = NSLock()
    private var file: PosixFile?
    private var part: UInt32
    private var flushedHandshake: ByteBuffer?

    /// Creates the single file `path` (it must not exist) and writes its header.
    public convenience init(path: String, sessionID: UInt64, options: Options = .default) throws {
        try self.init(path: path, rotation: nil, sessionID: sessionID, options: options)
    }

    /// Creates part 1 of `rotation`'s session (it must not exist) and writes its header.
    public convenience init(rotation: CaptureRotation, sessionID: UInt64, options: Options = .default) throws {
        guard rotation.hasValidSessionName else {
            throw CaptureError.captureFileOpenFailed(
                path: rotation.path(part: 1), reason: "the session name may hold only letters, digits, '-', '_' and '.'"
            )
        }
        try self.init(path: rotation.path(part: 1), rotation: rotation, sessionID: sessionID, options: options)
    }

    private init(path: String, rotation: CaptureRotation?, sessionID: UInt64, options: Options) throws {
        self.options = options
        self.sessionID = sessionID
        self.rotation = rotation
        self.part = 1
        self.stats = Statistics(currentPath: path)
        pending.reserveCapacity(min(options.maxBufferedBytes, options.flushThresholdBytes * 2))
        file = try openPart(path: path, part: 1)
    }

    deinit {
        try? close()
    }

    public var statistics: Statistics {
        stateLock.lock()
        defer { stateLock.unlock() }
        return stats
    }

    /// Bytes buffered and not yet flushed.
    public var bufferedBytes: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return pending.readableBytes
    }

    /// Buffers `record`, and flushes on this thread when a threshold is reached or the record
    /// does not fit in the buffer. Blocks for as long as that I/O takes.
    public func write(_ record: CaptureRecord) throws {
        switch try append(record, force: false) {
        case .buffered(let flushDue):
            if flushDue { try flush() }
        case .wouldExceedBuffer:
            try flush()
            _ = try append(record, force: true)
        }
    }

    /// Buffers `record` unless that would exceed ``Options/maxBufferedBytes``. Never does I/O.
    /// After ``close()`` it reports `wouldExceedBuffer`.
    public func tryWrite(_ record: CaptureRecord) -> TryWriteResult {
        (try? append(record, force: false)) ?? .wouldExceedBuffer
    }

    private func append(_ record: CaptureRecord, force: Bool) throws -> TryWriteResult {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard !closed else { throw CaptureError.captureWriterClosed(path: stats.currentPath) }
        let mark = pending.writerIndex
        let size = record.encode(into: &pending)
        if !force, pending.readableBytes > options.maxBufferedBytes, pending.readableBytes > size {
            pending.moveWriterIndex(to: mark)
            return .wouldExceedBuffer
        }
        if case .handshake = record {
            // A copy, so the buffer's storage stays uniquely owned.
            var copy = ByteBuffer()
            copy.writeImmutableBuffer(pending.getSlice(at: mark, length: size)!)
            pendingHandshake = copy
        }
        pendingRecords += 1
        stats.recordsBuffered += 1
        let due = pending.readableBytes >= options.flushThresholdBytes || pendingRecords >= options.flushThresholdRecords
        return .buffered(flushDue: due)
    }

    /// Writes everything buffered to the file (and rotates if the limit is reached).
    public func flush() throws {
        ioLock.lock()
        defer { ioLock.unlock() }
        stateLock.lock()
        var taken = pending
        pending = spare ?? ByteBuffer()
        spare = nil
        pendingRecords = 0
        if let handshake = pendingHandshake { flushedHandshake = handshake }
        pendingHandshake = nil
        stateLock.unlock()
        guard let file else { return }
        if taken.readableBytes > 0 {
            try taken.withUnsafeReadableBytes { try file.writeAll($0) }
            if options.syncOnFlush { try file.sync() }
        }
        stateLock.lock()
        stats.bytesWritten += Int64(taken.readableBytes)
        stats.currentFileBytes += Int64(taken.readableBytes)
        stats.flushes += 1
        let fileBytes = stats.currentFileBytes
        taken.clear()
        spare = taken
        stateLock.unlock()
        if let rotation, let limit = rotation.maxFileBytes, fileBytes >= Int64(limit) {
            try rotate(rotation)
        }
    }

    /// Flushes, then closes the file. Later writes fail; a second close does nothing.
    public func close() throws {
        stateLock.lock()
        let wasClosed = closed
        closed = true
        stateLock.unlock()
        guard !wasClosed else { return }
        defer {
            ioLock.lock()
            file?.close()
            file = nil
            ioLock.unlock()
        }
        try flush()
    }

    /// Called with `ioLock` held.
    private func rotate(_ rotation: CaptureRotation) throws {
        file?.close()
        file = nil
        part += 1
        let path = rotation.path(part: part)
        let next = try openPart(path: path, part: part)
        var handshakeBytes = 0
        if let flushedHandshake {
            try flushedHandshake.withUnsafeReadableBytes { try next.writeAll($0) }
            handshakeBytes = flushedHandshake.readableBytes
        }
        file = next
        stateLock.lock()
        stats.currentPath = path
        stats.currentFileBytes += Int64(handshakeBytes)
        stats.bytesWritten += Int64(handshakeBytes)
        stateLock.unlock()
    }

    /// Creates the file and writes its header; the statistics count it.
    private func openPart(path: String, part: UInt32) throws -> PosixFile {
        let file = try PosixFile.create(path)
        var header = ByteBuffer()
        CaptureFileHeader(part: part, sessionID: sessionID).write(to: &header)
        do {
            try header.withUnsafeReadableBytes { try file.writeAll($0) }
        } catch {
            file.close()
            throw error
        }
        stateLock.lock()
        stats.currentFileBytes = Int64(CaptureFileHeader.size)
        stats.bytesWritten += Int64(CaptureFileHeader.size)
        stats.filesCreated += 1
        stateLock.unlock()
        return file
    }
}
