import BLIPCore
import NIOCore

/// Reads the records of one capture file in order, streaming (a bounded window of the file is
/// in memory), migrating records of older versions to the current layout.
///
/// - The header is checked on open: wrong magic or an unknown file version throws.
/// - A record cut short at the end of the file (the writer was killed mid-write) ends the
///   iteration cleanly; ``ending`` then says where and how many bytes were left over.
/// - A record whose CRC does not match, or whose length is impossible, is skipped: the reader
///   resynchronizes on the next place where a whole record checks out (a possible length, a
///   known version and kind, and its CRC), and lists what it skipped in ``damage``. When no
///   valid record follows, the rest of the file is one damaged range and the iteration ends
///   with ``Ending/corrupt(offset:reason:)``.
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
        /// From the damaged record at `offset` on, no valid record was found.
        case corrupt(offset: Int64, reason: String)
    }

    /// Bytes the reader skipped to get past a damaged record.
    public struct DamagedRange: Sendable, Hashable {
        /// File offset of the first skipped byte.
        public var offset: Int64
        public var bytes: Int
        /// Why the record there was refused.
        public var reason: String

        public init(offset: Int64, bytes: Int, reason: String) {
            self.offset = offset
            self.bytes = bytes
            self.reason = reason
        }
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
    /// Damaged stretches skipped, in file order (the last one may run to the end of the file,
    /// then ``ending`` is ``Ending/corrupt(offset:reason:)``).
    public private(set) var damage: [DamagedRange] = []

    private let file: PosixFile
    private var window: [UInt8] = []
    private var windowStart = 0
    /// File offset of `window[windowStart]`.
    private var offset: Int64
    private var atEndOfFile = false
    /// While set, the window keeps the bytes before its start (``validRecordAhead()`` returns there).
    private var lookingAhead = false
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
                try resynchronize(reason: "impossible record length \(length)")
                continue
            }
            try fill(atLeast: 4 + length + 4)
            guard window.count - windowStart >= 4 + length + 4 else {
                // A length running past the end: a cut tail, unless a whole record follows.
                if try validRecordAhead() {
                    try resynchronize(reason: "record length \(length) runs past the end of the file")
                    continue
                }
                return endTruncated(window.count - windowStart)
            }
            guard crcMatches(at: windowStart, length: length) else {
                try resynchronize(reason: "CRC mismatch")
                continue
            }
            if let record = try takeRecord(length: length) { return record }
        }
        return nil
    }

    /// Skips from the damaged record at the window's start to the next offset where a whole valid
    /// record starts (one byte at a time; the cheap checks come before the CRC), recording the
    /// skipped range; ends the iteration as corrupt when none does.
    private func resynchronize(reason: String) throws {
        let start = offset
        var skipped = 0
        repeat {
            windowStart += 1
            offset += 1
            skipped += 1
        } while try !validRecordHere()
        damage.append(DamagedRange(offset: start, bytes: skipped, reason: reason))
        if window.count - windowStart == 0 { ending = .corrupt(offset: start, reason: reason) }
    }

    /// True when a whole valid record starts at the window's start, or nothing is left.
    private func validRecordHere() throws -> Bool {
        try fill(atLeast: 4 + 2)
        let available = window.count - windowStart
        if available == 0 { return true }
        guard available >= 6 else { return false }
        let length = Int(readUInt32(at: windowStart))
        guard length >= 2, length <= CaptureFileFormat.maxRecordBytes,
              CaptureFileFormat.supportedRecordVersions.contains(Int(window[windowStart + 4])),
              CaptureRecord.Kind(rawValue: window[windowStart + 5]) != nil else { return false }
        try fill(atLeast: 4 + length + 4)
        guard window.count - windowStart >= 4 + length + 4 else { return false }
        return crcMatches(at: windowStart, length: length)
    }

    /// Whether a whole valid record starts somewhere after the window's start (the window's start
    /// is left where it was).
    private func validRecordAhead() throws -> Bool {
        let (savedStart, savedOffset) = (windowStart, offset)
        lookingAhead = true
        defer {
            (windowStart, offset) = (savedStart, savedOffset)
            lookingAhead = false
        }
        repeat {
            windowStart += 1
            offset += 1
        } while try !validRecordHere()
        return window.count - windowStart > 0
    }

    private func crcMatches(at start: Int, length: Int) -> Bool {
        let contentStart = start + 4
        var checksum = RunningChecksum()
        window.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[contentStart..<(contentStart + length)])) }
        return checksum.value == readUInt32(at: contentStart + length)
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

    /// Reads until the window holds `count` unread bytes or the file ends, a chunk at a time: a
    /// damaged length field (up to ``CaptureFileFormat/maxRecordBytes``) grows the window only by
    /// what the file holds, not by the length it claims.
    private func fill(atLeast count: Int) throws {
        if !lookingAhead, windowStart > 0, windowStart >= window.count / 2 {
            window.removeFirst(windowStart)
            windowStart = 0
        }
        while !atEndOfFile, window.count - windowStart < count {
            let got = try file.read(into: &window, count: chunkSize)
            if got == 0 { atEndOfFile = true }
        }
    }

    private func readUInt32(at index: Int) -> UInt32 {
        UInt32(window[index]) | UInt32(window[index + 1]) << 8 | UInt32(window[index + 2]) << 16
            | UInt32(window[index + 3]) << 24
    }
}
