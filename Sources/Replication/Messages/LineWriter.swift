/// Writes a line of text as UTF-8 into one temporary buffer and makes a String of it once.
/// Message summaries are built for every message the relay logs, and each String append or
/// interpolation costs a few hundred instructions; a write here is a copy.
///
/// Limits: the caller states the capacity (the buffer is on the stack when small); writing
/// past it traps.
struct LineWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var count = 0

    /// The text `write` appends, at most `capacity` bytes.
    static func text(capacity: Int, _ write: (inout LineWriter) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var writer = LineWriter(buffer: buffer)
            write(&writer)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
        }
    }

    private init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(bytes: $0) }
    }

    mutating func append(_ text: StaticString) {
        append(bytes: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, as `String(value)` writes it.
    mutating func append<Value: FixedWidthInteger>(decimal value: Value) {
        if value < 0 { append("-") }
        var rest = value.magnitude
        var digits = 1
        var scale: Value.Magnitude = 1
        while rest / scale >= 10 {
            scale *= 10
            digits += 1
        }
        precondition(count + digits <= buffer.count, "line longer than its capacity")
        repeat {
            buffer[count] = UInt8(ascii: "0") + UInt8(rest / scale)
            rest %= scale
            scale /= 10
            count += 1
        } while scale > 0
    }

    /// `bytes` as ``ByteCount/format(_:)`` writes it (at most ``ByteCount/maxLength`` bytes).
    mutating func append(byteCount bytes: Int) {
        guard bytes < 1000 else { return append(ByteCount.format(bytes)) }
        append(decimal: bytes)
        append(" B")
    }

    private mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        precondition(count + bytes.count <= buffer.count, "line longer than its capacity")
        guard let source = bytes.baseAddress else { return }
        (buffer.baseAddress! + count).update(from: source, count: bytes.count)
        count += bytes.count
    }
}
