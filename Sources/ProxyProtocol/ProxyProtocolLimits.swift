/// How much of a connection's first bytes the parser holds while it looks for a PROXY header.
public struct ProxyProtocolLimits: Sendable, Hashable {
    /// The longest version 1 line, CRLF included: `PROXY UNKNOWN` with two full IPv6 addresses
    /// and two five-digit ports is 107 bytes, and a receiver declares a line invalid that has no
    /// CRLF within its first 107 characters (`doc/proxy-protocol.txt` §2.1). Fixed by the
    /// protocol, so not configurable.
    public static let version1MaximumLineBytes = 107

    /// The 16 bytes of a version 2 header before its address block: signature, version and
    /// command, family and protocol, length (§2.2).
    public static let version2FixedBytes = 16

    /// Largest version 2 header accepted, its 16 fixed bytes included; a longer one ends the
    /// connection before its address block is held. The protocol allows 16 + 65,535 bytes, but
    /// designs its headers to fit one 536-byte TCP segment (§2: 576 - 40); this leaves room past
    /// that for the TLVs a proxy may add (a unique ID of up to 128 bytes, §2.2.5, ALPN, the TLS
    /// details of §2.2.6). An IPv6 address block alone is 52 bytes with the fixed ones.
    public var maxVersion2HeaderBytes = 1024

    public init() {}

    public init(maxVersion2HeaderBytes: Int) {
        self.maxVersion2HeaderBytes = maxVersion2HeaderBytes
    }
}
