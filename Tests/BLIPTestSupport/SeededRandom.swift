/// A deterministic random generator (SplitMix64) so property tests repeat exactly.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Random bytes; `compressible` makes JSON-like text that deflates well.
    public mutating func bytes(_ count: Int, compressible: Bool = false) -> [UInt8] {
        if compressible {
            let words = ["\"_id\":", "\"doc-", "\"channels\":[", "\"type\":\"order\"", ",", "{", "}", "1234", "true", "\"name\":\"Ada\""]
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count { out.append(contentsOf: words[Int(next() % UInt64(words.count))].utf8) }
            return Array(out.prefix(count))
        }
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
