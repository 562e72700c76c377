import NIOCore

/// The 24 bytes at the start of every BlipScope capture file (`.blipcap`).
///
/// ```
/// offset size  field
///  0     8     magic  89 42 4C 49 50 43 41 50   ("\x89BLIPCAP")
///  8     2     file format version, little-endian (1): the header and record framing
/// 10     2     reserved, 0
/// 12     4     part number, little-endian: 1 for a session's first file, 2… after rotation
/// 16     8     session id, little-endian
/// ```
///
/// Records follow the header back to back, each framed as
///
/// ```
/// u32 LE  N       bytes that follow, up to (not including) the CRC
/// u8      record version (each record carries its own; 1…``CaptureFileFormat/recordVersion``)
/// u8      record kind (``CaptureRecord/Kind``)
/// N-2     body, whose layout depends on kind and version (``CaptureRecord``)
/// u32 LE  CRC-32 (IEEE, as zlib's crc32) of those N bytes
/// ```
///
/// A reader stops cleanly where a record is cut short (the writer was killed mid-write) and
/// reports the tail; everything before it stays readable.
public struct CaptureFileHeader: Sendable, Hashable {
    public var fileVersion: UInt16
    public var part: UInt32
    public var sessionID: UInt64

    public init(fileVersion: UInt16 = CaptureFileFormat.fileVersion, part: UInt32 = 1, sessionID: UInt64) {
        self.fileVersion = fileVersion
        self.part = part
        self.sessionID = sessionID
    }

    public static let size = 24

    func write(to buffer: inout ByteBuffer) {
        buffer.writeBytes(CaptureFileFormat.magic)
        buffer.writeInteger(fileVersion, endianness: .little)
        buffer.writeInteger(UInt16(0), endianness: .little)
        buffer.writeInteger(part, endianness: .little)
        buffer.writeInteger(sessionID, endianness: .little)
    }

    /// Parses a header from the first ``size`` bytes of `buffer` (not moving its reader index).
    /// Throws ``CaptureError/Code/notACaptureFile`` or ``CaptureError/Code/unsupportedCaptureVersion``.
    static func parse(_ buffer: ByteBuffer, path: String) throws -> CaptureFileHeader {
        guard buffer.readableBytes >= size,
              buffer.getBytes(at: buffer.readerIndex, length: 8) == CaptureFileFormat.magic else {
            throw CaptureError.notACaptureFile(path: path)
        }
        let start = buffer.readerIndex
        let version = buffer.getInteger(at: start + 8, endianness: .little, as: UInt16.self)!
        guard CaptureFileFormat.supportedFileVersions.contains(Int(version)) else {
            throw CaptureError.unsupportedCaptureVersion(
                what: "capture file", version: Int(version), supported: CaptureFileFormat.supportedFileVersions
            )
        }
        return CaptureFileHeader(
            fileVersion: version,
            part: buffer.getInteger(at: start + 12, endianness: .little, as: UInt32.self)!,
            sessionID: buffer.getInteger(at: start + 16, endianness: .little, as: UInt64.self)!
        )
    }
}

/// Constants of the capture file format; see ``CaptureFileHeader`` for the layout.
public enum CaptureFileFormat {
    public static let magic: [UInt8] = [0x89, 0x42, 0x4C, 0x49, 0x50, 0x43, 0x41, 0x50]
    /// Version of the header and of the record framing.
    public static let fileVersion: UInt16 = 1
    public static let supportedFileVersions: ClosedRange<Int> = 1...1
    /// Version of the record bodies this build writes; older ones are migrated when read.
    public static let recordVersion: UInt8 = 2
    public static let supportedRecordVersions: ClosedRange<Int> = 1...Int(recordVersion)
    /// The file name extension, without the dot.
    public static let fileExtension = "blipcap"
    /// Records longer than this are taken for corruption by the reader.
    public static let maxRecordBytes = 64 << 20

    /// What the first bytes of a file say it is.
    public enum Kind: Sendable, Hashable {
        case captureFile, pcap, pcapng, unknown
    }

    /// Sniffs the first bytes of a file (at least 4; 8 to recognise a capture file).
    public static func kind(ofPrefix bytes: [UInt8]) -> Kind {
        if bytes.count >= 8, Array(bytes.prefix(8)) == magic { return .captureFile }
        guard bytes.count >= 4 else { return .unknown }
        let word = Array(bytes.prefix(4))
        switch word {
        case [0x0A, 0x0D, 0x0D, 0x0A]: return .pcapng
        case [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D]:
            return .pcap
        default: return .unknown
        }
    }

    /// Reads the first 8 bytes of the file at `path` and sniffs them; `.unknown` if it cannot be read.
    public static func kind(ofFileAt path: String) -> Kind {
        guard let handle = FileDescriptorReader(path: path) else { return .unknown }
        defer { handle.close() }
        return kind(ofPrefix: handle.read(upTo: 8))
    }
}
