import Foundation

/// SplitMix64: a small, seeded generator, so a soak's choices repeat from run to run.
public struct SoakRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The finalizer on its own: a well-spread hash of one value.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A size in `range`, log-uniform.
    public mutating func logUniform(_ range: ClosedRange<Int>) -> Int {
        let low = log2(Double(max(1, range.lowerBound)))
        let high = log2(Double(range.upperBound))
        let unit = Double(next() >> 11) / Double(1 << 53)
        return min(range.upperBound, max(range.lowerBound, Int(exp2(low + (high - low) * unit))))
    }
}
