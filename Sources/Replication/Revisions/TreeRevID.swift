/// A revision-tree revision ID: `generation-digest`, a positive decimal generation and 16–20
/// hex-encoded bytes (replication-protocol §4 "Revision Trees").
public struct TreeRevID: Sendable, Hashable, CustomStringConvertible {
    public var generation: UInt64
    public var digest: Substring

    /// Digest length in hex digits allowed by §4 (16 to 20 bytes).
    static let digestDigits = 32...40

    /// Parses `text`, or explains why it is not a rev-tree ID.
    public static func parse(_ text: String) -> Result<TreeRevID, ReplicationError> {
        guard let dash = text.firstIndex(of: "-") else {
            return .failure(.invalidRevID(text, "expected generation-digest"))
        }
        let generationText = text[..<dash]
        guard !generationText.isEmpty, generationText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let generation = UInt64(generationText), generation > 0 else {
            return .failure(.invalidRevID(text, "the generation must be a positive decimal integer"))
        }
        let digest = text[text.index(after: dash)...]
        guard digest.utf8.allSatisfy(\.isHexDigit) else {
            return .failure(.invalidRevID(text, "the digest must be hexadecimal"))
        }
        guard digestDigits.contains(digest.utf8.count) else {
            return .failure(.invalidRevID(text, "the digest has \(digest.utf8.count) hex digits, not 32 to 40"))
        }
        return .success(TreeRevID(generation: generation, digest: digest))
    }

    public var description: String { "\(generation)-\(digest)" }

    /// `3-a1b2…`: the generation and the first four digest digits, for log lines.
    public var abbreviated: String { "\(generation)-\(digest.prefix(4))…" }
}

extension UInt8 {
    var isHexDigit: Bool {
        (self >= 48 && self <= 57) || (self >= 97 && self <= 102) || (self >= 65 && self <= 70)
    }
}
