/// Finds the elements of a JSON array as byte ranges, without building a JSON tree, so a filter
/// can copy the entries it keeps byte for byte. Validates structure only as far as it needs to
/// find element boundaries (strings, nesting); it does not check number or literal syntax.
struct JSONArrayScanner {
    let bytes: [UInt8]

    /// The ranges of the elements of the array that starts at `start` (leading whitespace allowed),
    /// and the index just past its closing bracket.
    func elements(at start: Int) throws(ChangesFilterError) -> (elements: [Range<Int>], end: Int) {
        var index = skipSpace(start)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { throw ChangesFilterError("expected a JSON array") }
        index = skipSpace(index + 1)
        var result: [Range<Int>] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { return (result, index + 1) }
        while true {
            let valueStart = skipSpace(index)
            let valueEnd = try skipValue(valueStart)
            result.append(valueStart..<valueEnd)
            index = skipSpace(valueEnd)
            guard index < bytes.count else { throw ChangesFilterError("unterminated JSON array") }
            if bytes[index] == UInt8(ascii: "]") { return (result, index + 1) }
            guard bytes[index] == UInt8(ascii: ",") else { throw ChangesFilterError("expected , or ] at byte \(index)") }
            index += 1
        }
    }

    /// The decoded string at `range`, or nil if it is not a JSON string.
    func string(_ range: Range<Int>) -> String? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""),
              bytes[range.upperBound - 1] == UInt8(ascii: "\"") else { return nil }
        let inner = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        var out: [UInt8] = []
        var index = inner.startIndex
        while index < inner.endIndex {
            let byte = inner[index]
            index += 1
            guard byte == UInt8(ascii: "\\"), index < inner.endIndex else { out.append(byte); continue }
            let escaped = inner[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard index + 4 <= inner.endIndex,
                      let code = UInt32(String(decoding: inner[index..<(index + 4)], as: UTF8.self), radix: 16),
                      let scalar = Unicode.Scalar(code) else { return nil }
                index += 4
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: out.append(escaped)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func skipSpace(_ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        return index
    }

    private func skipValue(_ start: Int) throws(ChangesFilterError) -> Int {
        guard start < bytes.count else { throw ChangesFilterError("JSON ends where a value should be") }
        var index = start
        var depth = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return index + 1 }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    if depth == 0 { return index }
                    depth -= 1
                    if depth == 0 { return index + 1 }
                case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                    if depth == 0 { return index }
                default: break
                }
            }
            index += 1
        }
        if depth == 0 && !inString && index > start { return index }
        throw ChangesFilterError("unterminated JSON value")
    }
}

/// Why a `changes`/`proposeChanges` body or its reply could not be filtered or mapped.
public struct ChangesFilterError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
