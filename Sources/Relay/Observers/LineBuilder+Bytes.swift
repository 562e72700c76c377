import BLIPCore
import Capture
import Replication

extension LineBuilder {
    // MARK: bytes

    static let redactedMark: StaticString = "<redacted>"

    /// A static key is written as it is, JSON or not: the log's keys are plain words, with no
    /// quote, backslash or control character to escape.
    @inline(__always)
    mutating func beginField(_ key: StaticString) {
        let length = key.utf8CodeUnitCount
        assert(!Self.needsJSONEscape(UnsafeRawBufferPointer(start: key.utf8Start, count: length)), "log keys are plain words")
        reserve(length + 4)
        if json {
            put(0x2C)
            put(0x22)
            putShort(UnsafeRawPointer(key.utf8Start), length)
            put(0x22)
            put(0x3A)
        } else {
            put(0x20)
            putShort(UnsafeRawPointer(key.utf8Start), length)
            put(0x3D)
        }
    }

    /// A key given as raw bytes (a property's name), escaped as JSON needs.
    mutating func beginField(_ key: UnsafeRawBufferPointer) {
        if json {
            byte(0x2C)
            quotedJSON(key)
            byte(0x3A)
        } else {
            beginTextField(key)
        }
    }

    /// ` key=`: text keys are never quoted; control characters in one (a peer's property name)
    /// are escaped as in JSON.
    mutating func beginTextField(_ key: UnsafeRawBufferPointer) {
        reserve(key.count + 2)
        put(0x20)
        if key.contains(where: { $0 < 0x20 || $0 == 0x7F }) { escapedJSON(key) } else { put(key) }
        put(0x3D)
    }

    /// A string value: JSON-escaped in quotes, or in text quoted only when it must be. Control
    /// characters (a newline, ESC) are escaped in text too, as JSON writes them, so a peer's value
    /// cannot start a fake log line or drive a terminal; a backslash is then doubled.
    mutating func quoted(_ value: UnsafeRawBufferPointer) {
        if json { return quotedJSON(value) }
        let seen = Self.textClass(of: value)
        let needsQuotes = seen & Self.needsQuotes != 0, hasQuote = seen & Self.isQuote != 0
        if seen & Self.isControl != 0 {
            byte(0x22)
            escapedJSON(value)
            byte(0x22)
        } else if hasQuote {
            reserve(2 * value.count + 2)
            put(0x22)
            for byte in value {
                if byte == 0x22 { put(0x5C) }
                put(byte)
            }
            put(0x22)
        } else if needsQuotes {
            reserve(value.count + 2)
            put(0x22)
            put(value)
            put(0x22)
        } else {
            bytes(value)
        }
    }

    /// What a byte asks of a text value (``quoted(_:)``): quotes (a space or `=`), escaping its
    /// quote, or escaping as JSON does (a control character); 0 for any other byte.
    static let needsQuotes: UInt8 = 1, isQuote: UInt8 = 2, isControl: UInt8 = 4

    /// What `value` asks of a text line: its bytes' classes (``textClasses``) or-ed together, in
    /// one pass.
    @inline(__always)
    static func textClass(of value: UnsafeRawBufferPointer) -> UInt8 {
        var seen: UInt8 = 0
        let classes = textClasses
        for byte in value { seen |= classes[Int(byte)] }
        return seen
    }

    /// Each byte's class, looked up rather than tested: one load per byte of a value. Written
    /// once, when first used, and only read after (so shared by all threads without a lock).
    nonisolated(unsafe) private static let textClasses: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for byte in 0..<256 {
            switch byte {
            case 0x20, 0x3D: table[byte] = needsQuotes
            case 0x22: table[byte] = isQuote
            case ..<0x20, 0x7F: table[byte] = isControl
            default: table[byte] = 0
            }
        }
        return UnsafePointer(table)
    }()

    /// A JSON string: in quotes, escaped when it must be.
    mutating func quotedJSON(_ value: UnsafeRawBufferPointer) {
        if Self.needsJSONEscape(value) {
            byte(0x22)
            escapedJSON(value)
            byte(0x22)
        } else {
            reserve(value.count + 2)
            put(0x22)
            put(value)
            put(0x22)
        }
    }

    /// Whether `value` holds a quote, a backslash or a control character.
    static func needsJSONEscape(_ value: UnsafeRawBufferPointer) -> Bool {
        value.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }

    static let hexDigits: StaticString = "0123456789abcdef"

    /// JSON string escapes for quotes, backslashes and control characters; other bytes as they are.
    mutating func escapedJSON(_ value: UnsafeRawBufferPointer) {
        for byte in value {
            switch byte {
            case 0x22: append("\\\"")
            case 0x5C: append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case ..<0x20, 0x7F:
                append("\\u00")
                self.byte(Self.hexDigits.utf8Start[Int(byte >> 4)])
                self.byte(Self.hexDigits.utf8Start[Int(byte & 0xF)])
            default: self.byte(byte)
            }
        }
    }

    mutating func appendDecimal(_ value: Int) {
        reserve(20)  // a sign and up to 19 digits
        if value < 0 { put(0x2D) }
        count += DecimalDigits.write(value.magnitude, to: base + count)
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes(UnsafeRawBufferPointer($0)) }
    }

    mutating func bytes(_ value: UnsafeRawBufferPointer) {
        reserve(value.count)
        guard let source = value.baseAddress else { return }
        putShort(source, value.count)
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        reserve(1)
        put(value)
    }

    /// Writes within reserved room.
    @inline(__always)
    mutating func put(_ value: UInt8) {
        base[count] = value
        count += 1
    }

    /// Writes within reserved room: a few bytes (a key, a word) as two overlapping loads and
    /// stores (the first and last 8 or 4 bytes), not through a `memcpy` call.
    @inline(__always)
    mutating func putShort(_ source: UnsafeRawPointer, _ length: Int) {
        let destination = UnsafeMutableRawPointer(base + count)
        switch length {
        case 8...16:
            destination.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self),
                                   toByteOffset: length - 8, as: UInt64.self)
        case 4..<8:
            destination.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self),
                                   toByteOffset: length - 4, as: UInt32.self)
        case 1..<4:
            for index in 0..<length {
                destination.storeBytes(of: source.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index, as: UInt8.self)
            }
        case 0:
            return
        default:
            return put(UnsafeRawBufferPointer(start: source, count: length))
        }
        count += length
    }

    /// Writes within reserved room.
    mutating func put(_ value: UnsafeRawBufferPointer) {
        guard let source = value.baseAddress, !value.isEmpty else { return }
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: value.count)
        count += value.count
    }

    /// Makes room for `extra` more bytes (doubling the buffer as it grows).
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    @inline(never)
    mutating func grow(_ extra: Int) {
        let grown = max(2 * capacity, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = grown
    }
}
