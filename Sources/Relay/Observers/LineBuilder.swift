import BLIPCore

/// One log line being written as UTF-8 bytes: `time key=value …` (text; a value with a space, a
/// quote or `=` is quoted, its quotes escaped) or one JSON object. The relay logs every message
/// on its event loops, so nothing here makes a string per field: keys, values and numbers are
/// appended as bytes and the line becomes a `String` once, in ``finish()``.
struct LineBuilder {
    private var bytes: [UInt8] = []
    private let json: Bool

    init(json: Bool, event: String?) {
        self.json = json
        bytes.reserveCapacity(256)
        if json {
            append("{\"time\":\"")
            LogLine.appendTimestamp(to: &bytes)
            append("\"")
            if let event { text("event", event) }
        } else {
            LogLine.appendTimestamp(to: &bytes)
        }
    }

    mutating func finish() -> String {
        if json { bytes.append(0x7D) }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: fields

    mutating func text(_ key: String, _ value: String) {
        var value = value
        value.withUTF8 { put(key, UnsafeRawBufferPointer($0)) }
    }

    /// A value given as raw bytes (a property); `redacted` writes `<redacted>` instead.
    mutating func raw(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, redacted: Bool = false) {
        beginField(key)
        if redacted {
            quoted(UnsafeRawBufferPointer(start: Self.redactedMark.utf8Start, count: Self.redactedMark.utf8CodeUnitCount))
        } else {
            quoted(value)
        }
    }

    mutating func raw(_ key: String, _ value: UnsafeRawBufferPointer) { put(key, value) }

    mutating func int(_ key: String, _ value: Int) {
        beginField(key)
        appendDecimal(value)
    }

    /// Nanoseconds shown as milliseconds with three decimals.
    mutating func millis(_ key: String, _ nanoseconds: Int64) {
        beginField(key)
        let micros = Int(nanoseconds / 1000)
        appendDecimal(micros / 1000)
        bytes.append(0x2E)
        let fraction = micros % 1000
        if fraction < 100 { bytes.append(0x30) }
        if fraction < 10 { bytes.append(0x30) }
        appendDecimal(fraction)
    }

    /// Message flags as letters (`Z` compressed, `U` urgent, `N` no-reply, `M` more coming; `-` for none).
    mutating func flags(_ flags: FrameFlags) {
        beginField("flags")
        let start = bytes.count
        if json { bytes.append(0x22) }
        if flags.isCompressed { bytes.append(0x5A) }
        if flags.isUrgent { bytes.append(0x55) }
        if flags.isNoReply { bytes.append(0x4E) }
        if flags.hasMoreComing { bytes.append(0x4D) }
        if bytes.count == start + (json ? 1 : 0) { bytes.append(0x2D) }
        if json { bytes.append(0x22) }
    }

    /// Text lines leave a missing value out; JSON writes `null`.
    mutating func null(_ key: String) {
        guard json else { return }
        beginField(key)
        append("null")
    }

    // MARK: bytes

    private static let redactedMark: StaticString = "<redacted>"

    private mutating func put(_ key: String, _ value: UnsafeRawBufferPointer) {
        var key = key
        key.withUTF8 { beginField(UnsafeRawBufferPointer($0)) }
        quoted(value)
    }

    private mutating func beginField(_ key: String) {
        var key = key
        key.withUTF8 { beginField(UnsafeRawBufferPointer($0)) }
    }

    private mutating func beginField(_ key: UnsafeRawBufferPointer) {
        if json {
            append(",\"")
            escapedJSON(key)
            append("\":")
        } else {
            bytes.append(0x20)
            bytes.append(contentsOf: key)
            bytes.append(0x3D)
        }
    }

    /// A string value: JSON-escaped in quotes, or in text quoted only when it must be.
    private mutating func quoted(_ value: UnsafeRawBufferPointer) {
        if json {
            bytes.append(0x22)
            escapedJSON(value)
            bytes.append(0x22)
        } else if value.contains(where: { $0 == 0x20 || $0 == 0x22 || $0 == 0x3D }) {
            bytes.append(0x22)
            for byte in value {
                if byte == 0x22 { bytes.append(0x5C) }
                bytes.append(byte)
            }
            bytes.append(0x22)
        } else {
            bytes.append(contentsOf: value)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// JSON string escapes for quotes, backslashes and control characters; other bytes as they are.
    private mutating func escapedJSON(_ value: UnsafeRawBufferPointer) {
        guard value.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            bytes.append(contentsOf: value)
            return
        }
        for byte in value {
            switch byte {
            case 0x22: append("\\\"")
            case 0x5C: append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case ..<0x20:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    private mutating func appendDecimal(_ value: Int) {
        if value < 0 { bytes.append(0x2D) }
        var rest = value.magnitude
        if rest < 10 {
            bytes.append(UInt8(48 + rest))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits, filled from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            while rest > 0 {
                index -= 1
                buffer[index] = UInt8(48 + rest % 10)
                rest /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
