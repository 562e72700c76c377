import NIOCore

/// The 4-byte key a client masks its frames with (RFC 6455 §5.3).
///
/// Masking XORs 32 bytes at a time (two 16-byte vectors), then eight (the key repeated across a
/// 64-bit word), and only the last 0–7 bytes one by one; NIO's `webSocketUnmask` works byte by
/// byte, many times slower on large payloads. Masking and unmasking are the same operation.
public struct WebSocketMaskingKey: Sendable, Hashable {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) { bytes = (b0, b1, b2, b3) }

    /// The key from its four bytes in wire order, the first in the high bits.
    public init(wireOrder value: UInt32) {
        bytes = (UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                 UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value))
    }

    /// A fresh random key, for frames a relay or client builds itself.
    public static func random() -> WebSocketMaskingKey { WebSocketMaskingKey(wireOrder: .random(in: .min ... .max)) }

    /// A deterministic key for the `index`-th client frame of a synthesized capture, so exports of
    /// the same session are byte-identical (SplitMix64 of the index).
    public static func deterministic(index: UInt64) -> WebSocketMaskingKey {
        var z = index &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return WebSocketMaskingKey(UInt8(truncatingIfNeeded: z), UInt8(truncatingIfNeeded: z >> 8),
                                   UInt8(truncatingIfNeeded: z >> 16), UInt8(truncatingIfNeeded: z >> 24))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0); hasher.combine(bytes.1); hasher.combine(bytes.2); hasher.combine(bytes.3)
    }

    /// The key byte applied at `position` of a payload.
    public subscript(position: Int) -> UInt8 {
        switch position & 3 {
        case 0: bytes.0
        case 1: bytes.1
        case 2: bytes.2
        default: bytes.3
        }
    }

    /// XORs the readable bytes of `buffer` in place; the first readable byte is payload byte 0.
    public func unmask(_ buffer: inout ByteBuffer) {
        buffer.withUnsafeMutableReadableBytes { apply(to: $0) }
    }

    /// A copy of `payload` with the key applied, the payload itself untouched: one pass that
    /// reads the payload and writes the masked bytes into the copy.
    public func applied(to payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var copy = allocator.buffer(capacity: payload.readableBytes)
        write(payload, maskedTo: &copy)
        return copy
    }

    /// Appends `payload` with the key applied to `buffer` (its first readable byte is payload
    /// byte 0), the payload itself untouched: one pass, as ``applied(to:allocator:)``, into a
    /// buffer the caller may reuse.
    public func write(_ payload: ByteBuffer, maskedTo buffer: inout ByteBuffer) {
        let written = payload.withUnsafeReadableBytes { source in
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: source.count) { destination in
                apply(from: source, to: destination)
                return source.count
            }
        }
        assert(written == payload.readableBytes)
    }

    /// XORs `raw` in place; its first byte is payload byte 0.
    public func apply(to raw: UnsafeMutableRawBufferPointer) {
        apply(from: UnsafeRawBufferPointer(raw), to: raw)
    }

    /// Writes `source` with the key applied to the start of `destination` (at least as long;
    /// the two may be the same memory). The first byte of `source` is payload byte 0.
    private func apply(from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer) {
        guard let from = source.baseAddress, let to = destination.baseAddress else { return }
        precondition(destination.count >= source.count, "room for the masked copy")
        let wideKey = repeatedKey
        let count = source.count
        var position = 0
        // 32 bytes a turn as two 16-byte vectors (SSE2 / NEON), then words, then bytes.
        let vectorKey = unsafeBitCast(SIMD2<UInt64>(repeating: wideKey), to: SIMD16<UInt8>.self)
        while position + 32 <= count {
            let low = from.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
            let high = from.loadUnaligned(fromByteOffset: position + 16, as: SIMD16<UInt8>.self)
            to.storeBytes(of: low ^ vectorKey, toByteOffset: position, as: SIMD16<UInt8>.self)
            to.storeBytes(of: high ^ vectorKey, toByteOffset: position + 16, as: SIMD16<UInt8>.self)
            position += 32
        }
        while position + 8 <= count {
            let word = from.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            to.storeBytes(of: word ^ wideKey, toByteOffset: position, as: UInt64.self)
            position += 8
        }
        while position < count {
            to.storeBytes(of: from.load(fromByteOffset: position, as: UInt8.self) ^ self[position],
                          toByteOffset: position, as: UInt8.self)
            position += 1
        }
    }

    /// The key written twice in memory order and read back as one native-endian word, so that
    /// XOR with a loaded word applies each key byte to the right payload byte.
    private var repeatedKey: UInt64 {
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { raw in
            for position in 0..<8 { raw[position] = self[position] }
        }
        return word
    }
}
