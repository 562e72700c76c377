/// Writes unsigned integers in decimal as ASCII, for the lines the relay logs for every message
/// (``LineWriter`` here; the relay's log line builder and its timestamps): digits counted by
/// comparisons and written two at a time from a table, with one- and two-digit numbers (flags,
/// small counts) written at once.
public enum DecimalDigits {
    /// `00` to `99`.
    @usableFromInline static let pairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// `value` (0…99) as two digits, a leading zero included: times and dates. A value out of
    /// that range (a negative one included) is written as `99`: the digits come from a table,
    /// which the lookup must not leave.
    @inlinable @inline(__always)
    public static func writeTwo(_ value: Int, to out: UnsafeMutablePointer<UInt8>) {
        let pair = Int(min(UInt(truncatingIfNeeded: value), 99)) &* 2
        out[0] = pairs.utf8Start[pair]
        out[1] = pairs.utf8Start[pair &+ 1]
    }

    /// How many digits `value` has (1 to 20).
    @inlinable @inline(__always) public static func count(_ value: UInt) -> Int {
        if value < 10 { return 1 }
        if value < 100 { return 2 }
        if value < 1_000 { return 3 }
        if value < 10_000 { return 4 }
        var digits = 5
        var power: UInt = 100_000
        while digits < 20, value >= power {
            digits += 1
            power &*= 10
        }
        return digits
    }

    /// Writes `value`'s ``count(_:)`` digits at `out`; returns how many.
    @inlinable @inline(__always) @discardableResult
    public static func write(_ value: UInt, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let pairs = Self.pairs.utf8Start
        if value < 10 {
            out[0] = UInt8(truncatingIfNeeded: 48 &+ value)
            return 1
        }
        if value < 100 {
            let pair = Int(value) &* 2
            out[0] = pairs[pair]
            out[1] = pairs[pair &+ 1]
            return 2
        }
        return write(value, digits: count(value), to: out)
    }

    /// Writes `value`, which has `digits` digits (its ``count(_:)``), at `out`; returns `digits`.
    @inlinable @inline(__always) @discardableResult
    public static func write(_ value: UInt, digits: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let pairs = Self.pairs.utf8Start
        var rest = value
        var index = digits
        while rest >= 100 {
            let pair = Int(rest % 100) &* 2
            rest /= 100
            index &-= 2
            out[index] = pairs[pair]
            out[index &+ 1] = pairs[pair &+ 1]
        }
        if rest >= 10 {
            out[0] = pairs[Int(rest) &* 2]
            out[1] = pairs[Int(rest) &* 2 &+ 1]
        } else {
            out[0] = UInt8(truncatingIfNeeded: 48 &+ rest)
        }
        return digits
    }
}
