import BLIPCore
import Capture
import NIOConcurrencyHelpers
import NIOCore

/// One session's capture: its ``CaptureWriter`` and what to do when the writer's buffer is full.
///
/// ``append(_:)`` runs on the session's event loop and never does I/O. ``drain()`` and
/// ``close()`` run on the ``CaptureFlusher``'s thread and do the file I/O.
///
/// - `backPressure`: a record that does not fit goes to ``overflow`` (in order; later records
///   follow it there) and the session's ``SessionReadGate`` is held; ``drain()`` flushes, moves
///   the overflow into the writer and releases the gate once the overflow is empty. The overflow
///   is bounded by what the peers had already sent when reading stopped (one read per peer).
/// - `drop`: the record is counted; ``drain()`` writes a ``CaptureRecord/dropped(_:)`` record
///   with the count after the next flush.
/// - A write error (disk full, file removed) ends the capture of this session: the gate is
///   released, later records are counted as dropped, and the error is reported once.
final class SessionCapture: @unchecked Sendable {
    let sessionID: UInt64
    let writer: CaptureWriter
    /// Masks secrets in the frames before they are recorded (event loop only); nil records them as sent.
    let redactor: CaptureRedactor?
    private let gate: SessionReadGate?
    private let policy: RelayConfiguration.CaptureOverflowPolicy
    /// Runs on the flusher's thread before each flush (tests slow the disk down with it).
    private let beforeFlush: (@Sendable (UInt64) -> Void)?

    private let lock = NIOLock()
    private var overflow = CircularBuffer<CaptureRecord>()
    private var unreportedDrops: UInt64 = 0
    private var totalDrops: UInt64 = 0
    private var holds = 0
    private var failure: (any Error)?
    private var closing = false
    /// What ``takeProgress()`` reported so far (flusher thread only).
    private var reported = CaptureProgress()
    /// Heads recorded from `.messageHead` events, so `.message` does not record them twice.
    private var headsSeen = Set<HeadKey>()

    struct HeadKey: Hashable {
        var direction: UInt8
        var type: UInt8
        var number: MessageNumber
    }

    init(writer: CaptureWriter, gate: SessionReadGate?, policy: RelayConfiguration.CaptureOverflowPolicy,
         beforeFlush: (@Sendable (UInt64) -> Void)?, redactor: CaptureRedactor? = nil) {
        self.sessionID = writer.sessionID
        self.writer = writer
        self.redactor = redactor
        self.gate = gate
        self.policy = policy
        self.beforeFlush = beforeFlush
    }

    /// Records dropped so far (policy `drop`, or after a write error).
    var droppedRecords: UInt64 { lock.withLock { totalDrops } }

    /// Times the capture held the session's reading (back-pressure).
    var readHolds: Int { lock.withLock { holds } }

    /// Buffers `record` (event loop). Returns true when the flusher should run for this session.
    func append(_ record: CaptureRecord) -> Bool {
        lock.withLock {
            guard !closing else { return false }
            if failure != nil {
                totalDrops += 1
                return false
            }
            if overflow.isEmpty, case .buffered(let due) = writer.tryWrite(record) { return due }
            switch policy {
            case .drop:
                unreportedDrops += 1
                totalDrops += 1
            case .backPressure:
                overflow.append(record)
                if let gate, !gate.isHeld {
                    holds += 1
                    gate.hold()
                }
            }
            return true
        }
    }

    /// Whether a head for this message should be recorded now; remembers heads seen first.
    func shouldRecordHead(direction: BLIPDirection, type: MessageType, number: MessageNumber, complete: Bool) -> Bool {
        let key = HeadKey(direction: UInt8(direction.rawValue), type: type.rawValue, number: number)
        return lock.withLock {
            if complete { return headsSeen.remove(key) == nil }
            headsSeen.insert(key)
            return true
        }
    }

    /// Appends the session's last records and stops taking more (event loop).
    func finalRecords(_ records: [CaptureRecord]) {
        for record in records { _ = append(record) }
        lock.withLock { closing = true }
    }

    /// Flushes, then moves overflow into the writer (flusher thread). Returns whether records are
    /// still waiting (call again), and the number of drops newly recorded (for the log).
    func drain() throws -> (behind: Bool, newlyReported: UInt64) {
        guard lock.withLock({ failure == nil }) else { return (false, 0) }
        beforeFlush?(sessionID)
        do {
            try writer.flush()
        } catch {
            fail(error)
            throw error
        }
        return lock.withLock {
            var reported: UInt64 = 0
            if unreportedDrops > 0, case .buffered = writer.tryWrite(droppedRecord(unreportedDrops)) {
                reported = unreportedDrops
                unreportedDrops = 0
            }
            while let first = overflow.first, case .buffered = writer.tryWrite(first) { overflow.removeFirst() }
            if overflow.isEmpty { gate?.release() }
            return (!overflow.isEmpty, reported)
        }
    }

    /// Writes everything left (blocking as long as the disk takes) and closes the file (flusher
    /// thread). Returns the drops recorded by this call.
    func close() throws -> UInt64 {
        let (rest, drops, failed) = lock.withLock {
            closing = true
            defer { overflow.removeAll(); unreportedDrops = 0 }
            return (Array(overflow), unreportedDrops, failure != nil)
        }
        gate?.release()
        guard !failed else { return 0 }
        do {
            for record in rest { try writer.write(record) }
            if drops > 0 { try writer.write(droppedRecord(drops)) }
            try writer.close()
        } catch {
            fail(error)
            throw error
        }
        return drops
    }

    /// Records, bytes and drops since the last call (flusher thread, after a flush or the close).
    func takeProgress() -> CaptureProgress {
        let writer = writer.statistics
        let now = CaptureProgress(records: writer.recordsBuffered, bytes: writer.bytesWritten, dropped: droppedRecords)
        defer { reported = now }
        return CaptureProgress(records: now.records - reported.records, bytes: now.bytes - reported.bytes,
                               dropped: now.dropped - reported.dropped)
    }

    private func fail(_ error: any Error) {
        lock.withLock {
            failure = error
            totalDrops += UInt64(overflow.count)
            overflow.removeAll()
        }
        gate?.release()
        try? writer.close()
    }

    private func droppedRecord(_ count: UInt64) -> CaptureRecord {
        .dropped(.init(time: .now(), count: count, reason: "the capture file's disk did not keep up"))
    }
}

/// What a session's capture wrote (records handed to its file, bytes written) and dropped
/// since the previous report: what the capture metrics count.
public struct CaptureProgress: Sendable, Equatable {
    public var records = 0
    public var bytes: Int64 = 0
    public var dropped: UInt64 = 0
}
