import CISAL
import CZlib
import NIOCore

/// CRC-32 with the zlib/IEEE polynomial (Go's `crc32.IEEE`), as BLIP checksums use it (§2.4).
/// ISA-L's `crc32_gzip_refl(c, buf, n)` equals zlib's `crc32(c, buf, n)` for every `c`.
public enum CRC32 {
    /// The CRC of `bytes` continued from `crc`.
    @inline(__always)
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer,
                              using library: DecodeLibrary = .selected) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        switch library {
        case .isal, .isalOnly:
            return crc32_gzip_refl(crc, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        case .zlib:
            return UInt32(truncatingIfNeeded: crc32(uLong(crc), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
        }
    }
}

/// The running CRC-32 (zlib/IEEE) over every uncompressed payload byte of every non-ACK frame in
/// one direction, never reset (wire-format reference §2.4).
public struct RunningChecksum: Sendable, Equatable {
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Resumes a running CRC from `value`: a relay that starts re-encoding a direction continues
    /// from the CRC the receiver has already accumulated (§2.4).
    public init(value: UInt32) { self.value = value }

    public mutating func update(_ bytes: UnsafeRawBufferPointer, using library: DecodeLibrary = .selected) {
        value = CRC32.update(value, bytes, using: library)
    }

    public mutating func update(_ buffer: ByteBuffer, using library: DecodeLibrary = .selected) {
        buffer.withUnsafeReadableBytes { update($0, using: library) }
    }

    /// Updates over the readable bytes of `buffer` from `offset` (relative to its reader index).
    public mutating func update(_ buffer: ByteBuffer, from offset: Int) {
        buffer.withUnsafeReadableBytes { update(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
    }
}
