/// What a PROXY protocol header says about the connection it starts (HAProxy's
/// `doc/proxy-protocol.txt`, §2.1 for version 1, §2.2 for version 2).
public enum ProxyHeader: Sendable, Hashable {
    /// The proxy relayed a TCP connection from `source` (the client) to `destination` (the
    /// address the client connected to, on the proxy): version 1 `TCP4`/`TCP6`, version 2
    /// `PROXY` over TCP/IPv4 (`0x11`) or TCP/IPv6 (`0x21`).
    case proxied(source: ProxyEndpoint, destination: ProxyEndpoint)
    /// Version 2 `LOCAL`: the proxy opened the connection itself (a health check). The receiver
    /// uses the connection's own endpoints and ignores any address block (§2.2).
    case local
    /// Version 1 `UNKNOWN`, or version 2 `PROXY` with the UNSPEC family and protocol (`0x00`):
    /// the proxy could not say. The receiver uses the connection's own endpoints (§2.1: it
    /// SHOULD accept such a connection).
    case unspecified
}

/// One end of a relayed TCP connection: an IP address and a port.
public struct ProxyEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var address: ProxyAddress
    public var port: UInt16

    public init(address: ProxyAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// `192.0.2.1:56324`, or `[2001:db8::1]:443`.
    public var description: String {
        switch address {
        case .ipv4: "\(address):\(port)"
        case .ipv6: "[\(address)]:\(port)"
        }
    }
}

/// An IPv4 or IPv6 address as a header carries it (network byte order).
public enum ProxyAddress: Sendable, Hashable, CustomStringConvertible {
    case ipv4(UInt32)
    case ipv6(high: UInt64, low: UInt64)

    /// The address's bytes in network order: 4 or 16 of them.
    public var bytes: [UInt8] {
        switch self {
        case let .ipv4(value):
            return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) }
        case let .ipv6(high, low):
            return (0..<16).map { index in
                let word = index < 8 ? high : low
                return UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index % 8)))
            }
        }
    }

    /// From 4 or 16 bytes in network order; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        for (position, byte) in bytes.enumerated() {
            if position < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self = bytes.count == 4 ? .ipv4(UInt32(truncatingIfNeeded: high)) : .ipv6(high: high, low: low)
    }

    /// The dotted quad, or the IPv6 address as eight groups of hex digits with the longest run
    /// of zero groups written `::` (RFC 5952 §4).
    public var description: String {
        switch self {
        case let .ipv4(value):
            return [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .ipv6:
            let raw = bytes
            let groups = (0..<8).map { UInt16(raw[2 * $0]) << 8 | UInt16(raw[2 * $0 + 1]) }
            var best = (start: -1, length: 0), run = (start: -1, length: 0)
            for (index, group) in groups.enumerated() {
                if group == 0 {
                    run = run.start < 0 ? (index, 1) : (run.start, run.length + 1)
                    if run.length > best.length { best = run }
                } else {
                    run = (-1, 0)
                }
            }
            let hex = groups.map { String($0, radix: 16) }
            guard best.length >= 2 else { return hex.joined(separator: ":") }
            return hex[..<best.start].joined(separator: ":") + "::"
                + hex[(best.start + best.length)...].joined(separator: ":")
        }
    }
}
