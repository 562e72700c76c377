import CZlib
import NIOCore

/// The running CRC-32 (zlib/IEEE) over every uncompressed payload byte of every non-ACK frame in
/// one direction, never reset (wire-format reference §2.4).
public struct RunningChecksum: Sendable, Equatable {
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Resumes a running CRC from `value`: a relay that starts re-encoding a direction continues
    /// from the CRC the receiver has already accumulated (§2.4).
    public init(value: UInt32) { self.value = value }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        value = UInt32(truncatingIfNeeded: crc32(uLong(value), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    public mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { update($0) }
    }

    /// Updates over the readable bytes of `buffer` from `offset` (relative to its reader index).
    public mutating func update(_ buffer: ByteBuffer, from offset: Int) {
        buffer.withUnsafeReadableBytes { update(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
    }
}
