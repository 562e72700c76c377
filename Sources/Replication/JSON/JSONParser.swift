import NIOCore

/// A strict RFC 8259 parser for message bodies. It never traps on hostile input: nesting is
/// limited, and every failure comes back as a sentence with the byte offset.
struct JSONParser {
    struct Failure: Error { let detail: String }

    /// Nesting deeper than this is refused (replication bodies are two or three levels deep).
    static let maxDepth = 64

    static func parse(_ buffer: ByteBuffer) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure> = buffer.withUnsafeReadableBytes { bytes in
            var parser = JSONParser(bytes: bytes)
            return parser.parseDocument()
        }
        return try result.get()
    }

    /// Parses raw bytes (valid only during the call).
    static func parse(bytes: UnsafeRawBufferPointer) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument().get()
    }

    static func parse(_ text: String) throws(Failure) -> JSONValue {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return try parse(buffer)
    }

    private mutating func parseDocument() -> Result<JSONValue, Failure> {
        do throws(Failure) {
            skipWhitespace()
            let value = try parseValue(depth: 0)
            skipWhitespace()
            guard index == bytes.count else { throw failure("trailing characters") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private func failure(_ detail: String) -> Failure { Failure(detail: "\(detail) at byte \(index)") }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)") }
        guard let byte = current else { throw failure("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("truncated literal") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw failure("invalid literal")
        }
        index += count
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard let byte = current else { throw failure("unterminated array") }
            index += 1
            if byte == UInt8(ascii: "]") { return .array(items) }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or ']'") }
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            guard let byte = current else { throw failure("unterminated object") }
            index += 1
            if byte == UInt8(ascii: "}") { return .object(members) }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
        }
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw failure("invalid number") }
        if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw failure("invalid fraction") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw failure("invalid exponent") }
            skipDigits()
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, the bytes are the string.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("control character in string") }
            index += 1
        }
        guard let stop = current else { throw failure("unterminated string") }
        var result = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if stop == UInt8(ascii: "\"") { index += 1; return result }
        var scalars = String.UnicodeScalarView()
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                result.unicodeScalars.append(contentsOf: scalars)
                return result
            case UInt8(ascii: "\\"):
                scalars.append(try parseEscape())
            case ..<0x20:
                throw failure("control character in string")
            default:
                // Re-read a multi-byte UTF-8 sequence whole.
                let sequenceStart = index - 1
                while let next = current, next & 0xC0 == 0x80 { index += 1 }
                let piece = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[sequenceStart..<index]), as: UTF8.self)
                scalars.append(contentsOf: piece.unicodeScalars)
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseEscape() throws(Failure) -> Unicode.Scalar {
        guard let byte = current else { throw failure("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800..<0xDC00).contains(high), current == UInt8(ascii: "\\"),
               index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") {
                index += 2
                let low = try parseHex4()
                if (0xDC00..<0xE000).contains(low) {
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}"
                }
            }
            return Unicode.Scalar(high) ?? "\u{FFFD}"
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = hexDigit(bytes[index]) else { throw failure("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
