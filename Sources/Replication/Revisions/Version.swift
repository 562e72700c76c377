/// One version of a version vector: `hextime@sourceID`, a hexadecimal timestamp of up to 16
/// digits and a 22-character base64 source ID (replication-protocol §4 "Version Vectors").
public struct Version: Sendable, Hashable, CustomStringConvertible {
    /// Usually nanoseconds since the Unix epoch; unsigned, never a double (§4).
    public var timestamp: UInt64
    public var sourceID: Substring

    static let sourceIDLength = 22

    /// The source LiteCore 4 names a rev-tree revision by inside a vector (`Version.cc`,
    /// legacyVersion): 16 fixed bytes that read `Revision+Tree+Encoding` in base64.
    public static let legacySourceID: Substring = "Revision+Tree+Encoding"

    public init(timestamp: UInt64, sourceID: Substring) {
        self.timestamp = timestamp
        self.sourceID = sourceID
    }

    /// The version LiteCore 4 gives a rev-tree revision when a vector succeeds it: the generation
    /// in the top 24 bits, the first 40 bits of the digest below (`Version.cc`, legacyVersion).
    public static func legacy(_ id: TreeRevID) -> Version {
        let high = UInt64(id.digest.prefix(10), radix: 16) ?? 0
        return Version(timestamp: (id.generation &<< 40) | high, sourceID: legacySourceID)
    }

    public static func parse(_ text: Substring) -> Result<Version, ReplicationError> {
        guard let at = text.firstIndex(of: "@") else {
            return .failure(.invalidRevID(String(text), "expected hextime@sourceID"))
        }
        let time = text[..<at]
        guard (1...16).contains(time.utf8.count), time.utf8.allSatisfy(\.isHexDigit),
              let timestamp = UInt64(time, radix: 16) else {
            return .failure(.invalidRevID(String(text), "the timestamp must be 1 to 16 hex digits"))
        }
        let source = text[text.index(after: at)...]
        guard source.utf8.count == sourceIDLength, source.utf8.allSatisfy(\.isBase64Digit) else {
            return .failure(.invalidRevID(String(text), "the source ID must be \(sourceIDLength) base64 characters"))
        }
        return .success(Version(timestamp: timestamp, sourceID: source))
    }

    public var description: String { String(timestamp, radix: 16) + "@" + sourceID }

    /// `17a3…@Zm9v…` for log lines.
    public var abbreviated: String {
        LineWriter.text { line in
            line.append(hex: timestamp, maxDigits: 4)
            line.append("…@")
            line.append(utf8: sourceID.utf8.prefix(4))  // base64 digits: a byte each
            line.append("…")
        }
    }
}

extension UInt8 {
    var isBase64Digit: Bool {
        (self >= 65 && self <= 90) || (self >= 97 && self <= 122) || (self >= 48 && self <= 57) || self == 43 || self == 47
    }
}
