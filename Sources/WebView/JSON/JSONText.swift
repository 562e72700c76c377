/// A small JSON text builder for the web view's answers: fields appended in order, strings
/// escaped per RFC 8259 §7, numbers that are not finite written as null. Faster than
/// `JSONEncoder` for the many small rows of a message page, and the key order is the code's.
struct JSONText {
    private(set) var text = ""
    private var needsComma = [false]

    init(capacity: Int = 256) { text.reserveCapacity(capacity) }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    mutating func beginObject(_ key: String? = nil) { open(key, "{") }
    mutating func endObject() { close("}") }
    mutating func beginArray(_ key: String? = nil) { open(key, "[") }
    mutating func endArray() { close("]") }

    private mutating func open(_ key: String?, _ bracket: String) {
        if let key { self.key(key) } else { separate() }
        text += bracket
        needsComma.append(false)
    }

    private mutating func close(_ bracket: String) {
        needsComma.removeLast()
        text += bracket
    }

    private mutating func key(_ key: String) {
        separate()
        Self.escape(key, into: &text)
        text += ":"
    }

    /// A field (`key` given) or an array element.
    mutating func string(_ key: String?, _ value: String?) {
        if let key { self.key(key) } else { separate() }
        if let value { Self.escape(value, into: &text) } else { text += "null" }
    }

    mutating func int(_ key: String?, _ value: Int?) {
        if let key { self.key(key) } else { separate() }
        text += value.map(String.init) ?? "null"
    }

    mutating func double(_ key: String?, _ value: Double?) {
        if let key { self.key(key) } else { separate() }
        if let value, value.isFinite { text += String(value) } else { text += "null" }
    }

    mutating func bool(_ key: String?, _ value: Bool) {
        if let key { self.key(key) } else { separate() }
        text += value ? "true" : "false"
    }

    /// Already-encoded JSON (from `JSONEncoder`).
    mutating func raw(_ key: String?, _ json: String) {
        if let key { self.key(key) } else { separate() }
        text += json
    }

    static func escape(_ string: String, into text: inout String) {
        text += "\""
        var plainStart = string.unicodeScalars.startIndex
        var index = plainStart
        let scalars = string.unicodeScalars
        while index != scalars.endIndex {
            let scalar = scalars[index]
            let escaped: String?
            switch scalar {
            case "\"": escaped = "\\\""
            case "\\": escaped = "\\\\"
            case "\n": escaped = "\\n"
            case "\r": escaped = "\\r"
            case "\t": escaped = "\\t"
            // U+2028/2029 are valid JSON but end lines in older JavaScript parsers.
            case "\u{2028}": escaped = "\\u2028"
            case "\u{2029}": escaped = "\\u2029"
            default:
                escaped = scalar.value < 0x20 ? "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16) : nil
            }
            if let escaped {
                text.unicodeScalars.append(contentsOf: scalars[plainStart..<index])
                text += escaped
                plainStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        text.unicodeScalars.append(contentsOf: scalars[plainStart..<scalars.endIndex])
        text += "\""
    }
}
