/// A packet's capture time: whole seconds since the Unix epoch plus nanoseconds.
///
/// Files written with microsecond precision simply have `nanoseconds` that are multiples of
/// 1,000. Comparison is exact; ``secondsSince1970`` is a `Double`, which near the present date
/// keeps about a quarter of a microsecond of precision, so compare `CaptureTimestamp`s, not doubles.
public struct CaptureTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Int64
    /// 0 ..< 1_000_000_000.
    public var nanoseconds: UInt32

    public init(seconds: Int64, nanoseconds: UInt32) {
        self.seconds = seconds + Int64(nanoseconds / 1_000_000_000)
        self.nanoseconds = nanoseconds % 1_000_000_000
    }

    /// Rounds to the nearest nanosecond.
    public init(secondsSince1970 value: Double) {
        let whole = value.rounded(.down)
        let fraction = ((value - whole) * 1e9).rounded()
        self.init(seconds: Int64(whole), nanoseconds: UInt32(min(max(fraction, 0), 999_999_999)))
    }

    public static let zero = CaptureTimestamp(seconds: 0, nanoseconds: 0)

    public var secondsSince1970: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `seconds.nnnnnnnnn`.
    public var description: String {
        let fraction = String(nanoseconds)
        return "\(seconds).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)"
    }
}
