/// A parsed JSON value, as replication bodies carry them (changes arrays, checkpoints,
/// `_attachments`). Numbers keep their text so opaque sequence IDs are shown exactly as sent
/// (replication-protocol §3 "changes": sequences are opaque and may be any JSON type).
/// Not `indirect`: arrays and objects already live on the heap, so scalars (a changes entry's
/// sequence, say) are stored inline instead of each in a box of its own.
public enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The value of an integral number (no fraction, no exponent) that fits in Int.
    public var intValue: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// True for JSON `true` and for a non-zero number (peers send deleted flags as `1`).
    public var isTruthy: Bool {
        switch self {
        case .bool(let value): return value
        case .number(let text): return Double(text).map { $0 != 0 } ?? false
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// Compact JSON text, object keys sorted.
    public var description: String {
        var text = ""
        render(into: &text)
        return text
    }

    func render(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += value
        case .string(let value): Self.renderString(value, into: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                item.render(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.renderString(key, into: &text)
                text += ":"
                members[key]!.render(into: &text)
            }
            text += "}"
        }
    }

    private static func renderString(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
