import NIOCore

/// A forward-only reader of JSON tokens over a body's bytes, for the hot message shapes
/// (changes and proposeChanges arrays and their replies) that need no value tree.
///
/// It is deliberately partial: it reads only what RFC 8259 allows and answers nil (or false)
/// at anything it does not handle itself, escapes and nesting included. Its callers then parse
/// the body again with the strict ``JSONParser``, so every malformed or unusual body is judged,
/// and reported, exactly as before; the scanner only makes the common case cheap.
struct JSONScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Reads a whole body that is one top-level array, each element read by `element`: nil when
    /// the body is not such an array, when `element` gives up, or past `maxCount` elements.
    static func scanArray<Element>(_ body: ByteBuffer, maxCount: Int = .max,
                                   element: (inout JSONScanner) -> Element?) -> [Element]? {
        body.withUnsafeReadableBytes { bytes -> [Element]? in
            var scanner = JSONScanner(bytes)
            guard scanner.consume(UInt8(ascii: "[")) else { return nil }
            var elements: [Element] = []
            if scanner.consume(UInt8(ascii: "]")) { return scanner.isAtEnd ? elements : nil }
            repeat {
                guard elements.count < maxCount, let next = element(&scanner) else { return nil }
                elements.append(next)
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "]")), scanner.isAtEnd else { return nil }
            return elements
        }
    }

    /// True when only whitespace is left.
    var isAtEnd: Bool {
        mutating get {
            skipWhitespace()
            return index == bytes.count
        }
    }

    /// The next byte after whitespace, not consumed.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    /// Consumes `byte` (after whitespace) if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes `true`, `false` or `null` if next, returning which (nil for none).
    mutating func literal() -> Literal? {
        skipWhitespace()
        guard index < bytes.count else { return nil }
        let candidate: Literal
        switch bytes[index] {
        case UInt8(ascii: "t"): candidate = .true
        case UInt8(ascii: "f"): candidate = .false
        case UInt8(ascii: "n"): candidate = .null
        default: return nil
        }
        guard matches(candidate.text) else { return nil }
        index += candidate.text.utf8CodeUnitCount
        return candidate
    }

    enum Literal {
        case `true`, `false`, null

        var text: StaticString {
            switch self {
            case .true: return "true"
            case .false: return "false"
            case .null: return "null"
            }
        }
    }

    /// A string without escapes or control characters: its bytes between the quotes. Nil for
    /// anything else (the caller then gives up on the fast path).
    mutating func simpleString() -> UnsafeRawBufferPointer? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var cursor = skipPlainStringBytes(from: start)
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                index = cursor + 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<cursor])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            cursor += 1
        }
        return nil
    }

    /// A number as RFC 8259 spells it: its bytes. Nil when malformed.
    mutating func number() -> UnsafeRawBufferPointer? {
        skipWhitespace()
        let start = index
        var cursor = index
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "-") { cursor += 1 }
        guard cursor < bytes.count, Self.isDigit(bytes[cursor]) else { return nil }
        if bytes[cursor] == UInt8(ascii: "0") { cursor += 1 } else { skipDigits(&cursor) }
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: ".") {
            cursor += 1
            guard cursor < bytes.count, Self.isDigit(bytes[cursor]) else { return nil }
            skipDigits(&cursor)
        }
        if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "e") || bytes[cursor] == UInt8(ascii: "E") {
            cursor += 1
            if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "+") || bytes[cursor] == UInt8(ascii: "-") { cursor += 1 }
            guard cursor < bytes.count, Self.isDigit(bytes[cursor]) else { return nil }
            skipDigits(&cursor)
        }
        index = cursor
        return UnsafeRawBufferPointer(rebasing: bytes[start..<cursor])
    }

    /// Skips one value of any type, validating it exactly as ``JSONParser`` does (escapes,
    /// control characters, number grammar, nesting below ``JSONParser/maxDepth`` counted from
    /// `depth`). False when the parser would fail.
    mutating func skipValue(depth: Int) -> Bool {
        guard depth < JSONParser.maxDepth, let byte = peek() else { return false }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            if consume(UInt8(ascii: "}")) { return true }
            repeat {
                guard peek() == UInt8(ascii: "\""), skipString(), consume(UInt8(ascii: ":")),
                      skipValue(depth: depth + 1) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            index += 1
            if consume(UInt8(ascii: "]")) { return true }
            repeat {
                guard skipValue(depth: depth + 1) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            return literal() != nil
        default:
            return number() != nil
        }
    }

    /// Skips a string (the scanner is at its quote), escapes included, validating them.
    private mutating func skipString() -> Bool {
        var cursor = skipPlainStringBytes(from: index + 1)
        while cursor < bytes.count {
            let byte = bytes[cursor]
            switch byte {
            case UInt8(ascii: "\""):
                index = cursor + 1
                return true
            case UInt8(ascii: "\\"):
                guard cursor + 1 < bytes.count else { return false }
                switch bytes[cursor + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    cursor += 2
                case UInt8(ascii: "u"):
                    guard cursor + 6 <= bytes.count else { return false }
                    for offset in 2..<6 where !bytes[cursor + offset].isHexDigit { return false }
                    cursor += 6
                default:
                    return false
                }
            case ..<0x20:
                return false
            default:
                cursor += 1
            }
        }
        return false
    }

    /// The offset of the first byte from `start` that is a quote, a backslash or a control
    /// character (or of the last 8-byte word's start): eight bytes per step, as string bodies
    /// (a revision's text) can be long.
    private func skipPlainStringBytes(from start: Int) -> Int {
        var cursor = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while cursor + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: cursor, as: UInt64.self)
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // A byte is flagged when it is zero (after the XOR) or below 0x20; bytes of 0x80 and
            // up never are, and a flag may be spurious only after a real one, which stops here.
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            if special & highs != 0 { return cursor }
            cursor += 8
        }
        return cursor
    }

    /// Where the next token starts (whitespace skipped), for slicing out a value.
    var nextTokenOffset: Int {
        mutating get {
            skipWhitespace()
            return index
        }
    }

    /// Just past the last token read.
    var endOffset: Int { index }

    /// ``JSONValue/isTruthy`` of the next value (skipped, validated, nested from `depth`),
    /// for the values it is cheap to decide on; nil for a number that is not an integer.
    mutating func truthiness(depth: Int) -> Bool? {
        guard let next = peek() else { return nil }
        switch next {
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            guard let literal = literal() else { return nil }
            return literal == .true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let token = number(), Self.isInteger(token) else { return nil }
            // An integer is zero only as "0" or "-0" (JSON has no leading zeros).
            return !(token.elementsEqual("0".utf8) || token.elementsEqual("-0".utf8))
        default:
            // Strings, arrays and objects are never truthy.
            return skipValue(depth: depth) ? false : nil
        }
    }

    /// The value of a number token made only of digits (no sign, fraction or exponent) that
    /// fits in Int; nil otherwise.
    static func unsignedInteger(_ token: UnsafeRawBufferPointer) -> Int? {
        guard !token.isEmpty else { return nil }
        var value = 0
        for byte in token {
            guard isDigit(byte) else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow && !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// True for a number token that is an integer (digits after an optional minus).
    static func isInteger(_ token: UnsafeRawBufferPointer) -> Bool {
        token.allSatisfy { isDigit($0) || $0 == UInt8(ascii: "-") }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func matches(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
        return true
    }

    private func skipDigits(_ cursor: inout Int) {
        while cursor < bytes.count, Self.isDigit(bytes[cursor]) { cursor += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }
}
