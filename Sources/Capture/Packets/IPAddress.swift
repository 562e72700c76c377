/// An IPv4 or IPv6 address, compact and hashable, printed in its usual text form
/// (dotted quad; RFC 5952 for IPv6, e.g. `::1`, `fe80::1:2`).
public enum IPAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    /// `bytes` must hold 4 or 16 bytes in network order.
    init<Bytes: Collection>(networkBytes bytes: Bytes) where Bytes.Element == UInt8 {
        var high: UInt64 = 0, low: UInt64 = 0
        for (position, byte) in bytes.enumerated() where position < 16 {
            if position < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self = bytes.count == 4 ? .v4(UInt32(truncatingIfNeeded: high)) : .v6(high: high, low: low)
    }

    public var description: String {
        switch self {
        case let .v4(value):
            return [24, 16, 8, 0].map { String((value >> $0) & 0xFF) }.joined(separator: ".")
        case let .v6(high, low):
            let groups = (0..<8).map { index -> UInt16 in
                let word = index < 4 ? high : low
                return UInt16(truncatingIfNeeded: word >> (48 - 16 * UInt64(index % 4)))
            }
            return Self.format(ipv6Groups: groups)
        }
    }

    /// RFC 5952: lower-case hex, no leading zeros, the longest run (≥ 2) of zero groups as `::`.
    private static func format(ipv6Groups groups: [UInt16]) -> String {
        var bestStart = -1, bestLength = 0, runStart = -1
        for index in 0...8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength { (bestStart, bestLength) = (runStart, index - runStart) }
                runStart = -1
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestLength >= 2 else { return hex.joined(separator: ":") }
        let head = hex[..<bestStart].joined(separator: ":")
        let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
        return head + "::" + tail
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case let (.v4(a), .v4(b)): a < b
        case (.v4, .v6): true
        case (.v6, .v4): false
        case let (.v6(ah, al), .v6(bh, bl)): (ah, al) < (bh, bl)
        }
    }
}
