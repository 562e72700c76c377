/// A request target split into its decoded path and query (`+` and `%XX` decoded as forms do).
public struct WebRequest: Sendable, Equatable {
    public var path: String
    public var query: [String: String]

    public init(target: String) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "")
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.decode(field[0], plusIsSpace: true)
                query[name] = field.count > 1 ? Self.decode(field[1], plusIsSpace: true) : ""
            }
        }
        self.query = query
    }

    /// Percent-decodes `text`; malformed escapes are kept as they are.
    public static func decode(_ text: Substring, plusIsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
               let high = hexValue(iterator[iterator.startIndex]), let low = hexValue(iterator[iterator.startIndex + 1]) {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else if plusIsSpace, byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// An integer query field, clamped to `range`.
    public func int(_ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        guard let text = query[name], let number = Int(text) else { return value }
        return min(max(number, range.lowerBound), range.upperBound)
    }
}
