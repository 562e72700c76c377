/// A revision-tree revision ID: `generation-digest`, a positive decimal generation and 16–20
/// hex-encoded bytes (replication-protocol §4 "Revision Trees").
public struct TreeRevID: Sendable, Hashable, CustomStringConvertible {
    public var generation: UInt64
    public var digest: Substring

    /// Digest length in hex digits allowed by §4 (16 to 20 bytes).
    static let digestDigits = 32...40

    /// Parses `text`, or explains why it is not a rev-tree ID.
    public static func parse(_ text: String) -> Result<TreeRevID, ReplicationError> {
        // On the UTF-8 bytes: this runs for every revision ID of every changes entry and rev.
        let checked: Check
        if let result = text.utf8.withContiguousStorageIfAvailable(check) {
            checked = result
        } else {
            checked = Array(text.utf8).withUnsafeBufferPointer(check)
        }
        switch checked {
        case .valid(let generation, let dash):
            let digest = text[text.utf8.index(text.utf8.startIndex, offsetBy: dash + 1)...]
            return .success(TreeRevID(generation: generation, digest: digest))
        case .noDash:
            return .failure(.invalidRevID(text, "expected generation-digest"))
        case .badGeneration:
            return .failure(.invalidRevID(text, "the generation must be a positive decimal integer"))
        case .badDigest:
            return .failure(.invalidRevID(text, "the digest must be hexadecimal"))
        case .badDigestLength(let digits):
            return .failure(.invalidRevID(text, "the digest has \(digits) hex digits, not 32 to 40"))
        }
    }

    private enum Check {
        case valid(generation: UInt64, dash: Int)
        case noDash, badGeneration, badDigest
        case badDigestLength(Int)
    }

    private static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> Check {
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")) else { return .noDash }
        guard dash > 0 else { return .badGeneration }
        var generation: UInt64 = 0
        for byte in bytes[..<dash] {
            guard byte >= 48 && byte <= 57 else { return .badGeneration }
            let (times10, overflow1) = generation.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - 48))
            guard !overflow1 && !overflow2 else { return .badGeneration }
            generation = sum
        }
        guard generation > 0 else { return .badGeneration }
        let digest = bytes[(dash + 1)...]
        for byte in digest where !byte.isHexDigit { return .badDigest }
        guard digestDigits.contains(digest.count) else { return .badDigestLength(digest.count) }
        return .valid(generation: generation, dash: dash)
    }

    public var description: String { "\(generation)-\(digest)" }

    /// `3-a1b2…`: the generation and the first four digest digits, for log lines.
    public var abbreviated: String {
        LineWriter.text { line in
            line.append(decimal: generation)
            line.append("-")
            line.append(utf8: digest.utf8.prefix(4))  // hex digits: a byte each
            line.append("…")
        }
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (self >= 48 && self <= 57) || (self >= 97 && self <= 102) || (self >= 65 && self <= 70)
    }
}
