#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address as 16 bytes; IPv4 (and IPv4-mapped IPv6, `::ffff:a.b.c.d`) is kept in the
/// last four bytes with ``isIPv4`` set, so `10.0.0.0/8` matches a client seen as `::ffff:10.1.2.3`.
public struct PolicyIPAddress: Sendable, Equatable {
    public var bytes: (UInt64, UInt64)
    public var isIPv4: Bool

    /// Parses dotted IPv4 or textual IPv6 (a `%zone` suffix is ignored); nil otherwise.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let value = UInt32(bigEndian: v4.s_addr)
            bytes = (0, 0x0000_FFFF_0000_0000 | UInt64(value))
            isIPv4 = true
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let raw = withUnsafeBytes(of: &v6) { Array($0) }
        var high: UInt64 = 0, low: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(raw[index]) }
        for index in 8..<16 { low = low << 8 | UInt64(raw[index]) }
        bytes = (high, low)
        isIPv4 = high == 0 && low >> 32 == 0xFFFF
    }

    public static func == (lhs: PolicyIPAddress, rhs: PolicyIPAddress) -> Bool {
        lhs.bytes == rhs.bytes && lhs.isIPv4 == rhs.isIPv4
    }
}

/// An address block from a policy file: `10.0.0.0/8`, `2001:db8::/32`, or one address (a /32 or
/// /128). IPv4 blocks match IPv4 clients (also seen as IPv4-mapped IPv6); IPv6 blocks match IPv6.
public struct CIDRBlock: Sendable, CustomStringConvertible {
    let network: (UInt64, UInt64)
    let mask: (UInt64, UInt64)
    let isIPv4: Bool
    public let source: String

    /// Nil for an unparsable address or a prefix length out of range.
    public init?(_ text: String) {
        source = text
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = PolicyIPAddress(parts[0]) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var length = width
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...width).contains(value) else { return nil }
            length = value
        }
        let bits = address.isIPv4 ? 96 + length : length
        let high: UInt64 = bits >= 64 ? ~0 : (bits == 0 ? 0 : ~0 << (64 - bits))
        let lowBits = max(0, bits - 64)
        let low: UInt64 = lowBits >= 64 ? ~0 : (lowBits == 0 ? 0 : ~0 << (64 - lowBits))
        mask = (high, low)
        network = (address.bytes.0 & high, address.bytes.1 & low)
        isIPv4 = address.isIPv4
    }

    public func contains(_ address: PolicyIPAddress) -> Bool {
        address.isIPv4 == isIPv4
            && address.bytes.0 & mask.0 == network.0
            && address.bytes.1 & mask.1 == network.1
    }

    public var description: String { source }
}
