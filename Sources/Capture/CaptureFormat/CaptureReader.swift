import BLIPCore
import NIOCore

/// Reads the records of one capture file in order, streaming (a bounded window of the file is
/// in memory), migrating records of older versions to the current layout.
///
/// - The header is checked on open: wrong magic or an unknown file version throws.
/// - A record cut short at the end of the file (the writer was killed mid-write) ends the
///   iteration cleanly; ``ending`` then says where and how many bytes were left over.
/// - A record whose CRC does not match, or whose length is impossible, also ends the iteration,
///   reported as ``Ending/corrupt(offset:reason:)``: framing cannot be trusted past it.
/// - A record of an unknown kind is skipped and counted (a newer writer's addition); a record
///   of a newer version than this build knows throws.
/// - Not thread-safe.
public final class CaptureReader {
    /// How the file ended.
    public enum Ending: Sendable, Hashable {
        /// The last record was complete.
        case clean
        /// `bytes` bytes at `offset` do not make a whole record: the tail of an interrupted write.
        case truncated(offset: Int64, bytes: Int)
        /// The record at `offset` is damaged; nothing after it was read.
        case corrupt(offset: Int64, reason: String)
    }

    public let path: String
    public let header: CaptureFileHeader
    /// Set once ``next()`` has returned nil.
    public private(set) var ending: Ending?
    public private(set) var recordsRead = 0
    /// Records read at an older version and migrated.
    public private(set) var migratedRecords = 0
    /// Records of kinds this build does not know, skipped.
    public private(set) var skippedRecords = 0

    private let file: PosixFile
    private var window: [UInt8] = []
    private var windowStart = 0
    /// File offset of `window[windowStart]`.
    private var offset: Int64
    private var atEndOfFile = false
    private let chunkSize = 256 << 10

    /// Opens `path` and reads its header.
    public init(path: String) throws {
        self.path = path
        let file = try PosixFile.openForReading(path)
        var initial: [UInt8] = []
        do {
            while initial.count < CaptureFileHeader.size,
                  try file.read(into: &initial, count: CaptureFileHeader.size - initial.count) > 0 {}
            header = try CaptureFileHeader.parse(ByteBuffer(bytes: initial), path: path)
        } catch {
            file.close()
            throw error
        }
        self.file = file
        window = initial
        windowStart = CaptureFileHeader.size
        offset = Int64(CaptureFileHeader.size)
    }

    deinit { file.close() }

    /// The next record, or nil at the end of the file (then see ``ending``).
    public func next() throws -> CaptureRecord? {
        while ending == nil {
            try fill(atLeast: 4)
            let available = window.count - windowStart
            if available == 0 {
                ending = .clean
                return nil
            }
            guard available >= 4 else { return endTruncated(available) }
            let length = Int(readUInt32(at: windowStart))
            guard length >= 2, length <= CaptureFileFormat.maxRecordBytes else {
                ending = .corrupt(offset: offset, reason: "impossible record length \(length)")
                return nil
            }
            try fill(atLeast: 4 + length + 4)
            guard window.count - windowStart >= 4 + length + 4 else { return endTruncated(window.count - windowStart) }
            if let record = try takeRecord(length: length) { return record }
        }
        return nil
    }

    /// Every remaining record.
    public func readAll() throws -> [CaptureRecord] {
        var records: [CaptureRecord] = []
        while let record = try next() { records.append(record) }
        return records
    }

    /// Consumes the complete record at the window's start; nil when it was skipped or ended the file.
    private func takeRecord(length: Int) throws -> CaptureRecord? {
        let recordOffset = offset
        let contentStart = windowStart + 4
        let stored = readUInt32(at: contentStart + length)
        var checksum = RunningChecksum()
        window.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[contentStart..<(contentStart + length)])) }
        guard checksum.value == stored else {
            ending = .corrupt(offset: recordOffset, reason: "CRC mismatch")
            return nil
        }
        let version = Int(window[contentStart])
        let kindByte = window[contentStart + 1]
        let body = ByteBuffer(bytes: window[(contentStart + 2)..<(contentStart + length)])
        windowStart += 4 + length + 4
        offset += Int64(4 + length + 4)
        guard CaptureFileFormat.supportedRecordVersions.contains(version) else {
            throw CaptureError.unsupportedCaptureVersion(
                what: "record at byte \(recordOffset) of \(path)", version: version,
                supported: CaptureFileFormat.supportedRecordVersions
            )
        }
        guard let kind = CaptureRecord.Kind(rawValue: kindByte) else {
            skippedRecords += 1
            return nil
        }
        var current = body
        if version < Int(CaptureFileFormat.recordVersion) {
            current = try CaptureRecordMigration.migrate(kind: kind, version: version, body: body, offset: recordOffset)
            migratedRecords += 1
        }
        recordsRead += 1
        return try CaptureRecord.decode(kind: kind, body: current, offset: recordOffset)
    }

    private func endTruncated(_ bytes: Int) -> CaptureRecord? {
        ending = .truncated(offset: offset, bytes: bytes)
        return nil
    }

    /// Reads until the window holds `count` unread bytes or the file ends.
    private func fill(atLeast count: Int) throws {
        if windowStart > 0, windowStart >= window.count / 2 {
            window.removeFirst(windowStart)
            windowStart = 0
        }
        while !atEndOfFile, window.count - windowStart < count {
            let got = try file.read(into: &window, count: max(chunkSize, count - (window.count - windowStart)))
            if got == 0 { atEndOfFile = true }
        }
    }

    private func readUInt32(at index: Int) -> UInt32 {
        UInt32(window[index]) | UInt32(window[index + 1]) << 8 | UInt32(window[index + 2]) << 16
            | UInt32(window[index + 3]) << 24
    }
}
