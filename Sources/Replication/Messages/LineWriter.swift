/// Writes a line of text as UTF-8 into one buffer and makes a String of it once. Message
/// summaries are built for every message the relay logs, and each String append or
/// interpolation costs a few hundred instructions; a write here is a copy.
///
/// ``text(_:)`` writes into a stack buffer of ``stackCapacity`` bytes. A longer line is only
/// measured there, and the closure runs a second time to write it into a buffer of its size,
/// so the closure must append the same pieces each time it runs (no side effects). A summary
/// writes a known profile's pieces as strings it builds, so a line past the stack buffer builds
/// them twice: the buffer (stack memory, untouched beyond what a line writes) holds 1 KiB.
struct LineWriter {
    static let stackCapacity = 1024

    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// Bytes appended so far; past `buffer.count`, only counted.
    private var count = 0

    /// The text `write` appends.
    static func text(_ write: (inout LineWriter) -> Void) -> String {
        var text = ""
        withText(write) { text = String(decoding: $0, as: UTF8.self) }
        return text
    }

    /// Lends `body` the UTF-8 bytes `write` appends, without making a String of them; the bytes
    /// are valid only during the call.
    static func withText(_ write: (inout LineWriter) -> Void, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let length = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackCapacity) { buffer in
            var writer = LineWriter(into: buffer)
            write(&writer)
            if writer.fits { body(writer.written) }
            return writer.count
        }
        guard length > stackCapacity else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            var writer = LineWriter(into: buffer)
            write(&writer)
            assert(writer.fits, "a line's pieces changed between two runs")
            body(writer.written)
        }
    }

    /// A writer into the caller's memory: what fits is written, ``length`` counts all of it.
    init(into buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// Bytes appended so far, written or (past the buffer) only counted.
    var length: Int { count }

    private var fits: Bool { count <= buffer.count }

    /// What was written (all of it when ``fits``).
    private var written: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: buffer[..<min(count, buffer.count)])
    }

    /// A String or Substring. (Generic, so that a literal picks the StaticString overload.)
    mutating func append<Text: StringProtocol>(_ text: Text) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(bytes: $0) }
        if copied == nil { append(bytes: Array(text.utf8)) }
    }

    /// UTF-8 bytes of a String, e.g. an ASCII prefix cut without walking its characters.
    mutating func append(utf8 bytes: Substring.UTF8View) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(bytes: $0) }
        if copied == nil { append(bytes: Array(bytes)) }
    }

    mutating func append(_ text: StaticString) {
        append(bytes: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, as `String(value)` writes it.
    mutating func append<Value: FixedWidthInteger>(decimal value: Value) {
        if value < 0 { append("-") }
        let magnitude = UInt(value.magnitude)
        let digits = DecimalDigits.count(magnitude)
        guard count + digits <= buffer.count else {
            count += digits
            return
        }
        count += DecimalDigits.write(magnitude, digits: digits, to: buffer.baseAddress! + count)
    }

    /// `value` in hexadecimal (lowercase), as `String(value, radix: 16)` writes it, cut to its
    /// first `maxDigits` digits.
    mutating func append(hex value: UInt64, maxDigits: Int) {
        var digits = 1
        while digits < 16, value >> (4 * UInt64(digits)) != 0 { digits += 1 }
        let written = min(digits, maxDigits)
        guard count + written <= buffer.count else {
            count += written
            return
        }
        for index in 0..<written {
            let nibble = UInt8(truncatingIfNeeded: value >> (4 * UInt64(digits - 1 - index))) & 0xF
            buffer[count] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            count += 1
        }
    }

    /// `bytes` as ``ByteCount/format(_:)`` writes it.
    mutating func append(byteCount bytes: Int) {
        guard bytes < 1000 else { return append(ByteCount.format(bytes)) }
        append(decimal: bytes)
        append(" B")
    }

    private mutating func append(bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append(bytes: $0) } }

    private mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        if count + bytes.count <= buffer.count, let source = bytes.baseAddress {
            (buffer.baseAddress! + count).update(from: source, count: bytes.count)
        }
        count += bytes.count
    }
}
