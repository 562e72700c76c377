extension ProxyHeaderParser {
    /// The 13th byte: the version in the high nibble, which must be 2, and the command in the
    /// low one, 0 (LOCAL) or 1 (PROXY); receivers must drop other values (`doc/proxy-protocol.txt` §2.2).
    static func checkVersionAndCommand(_ byte: UInt8) throws(ProxyProtocolError) {
        guard byte >> 4 == 2 else { throw .malformed("version \(byte >> 4), not 2") }
        guard byte & 0x0F <= 1 else { throw .malformed("command \(byte & 0x0F), neither LOCAL (0) nor PROXY (1)") }
    }

    /// The 14th byte: the family (0 UNSPEC, 1 INET, 2 INET6, 3 UNIX) in the high nibble, the
    /// protocol (0 UNSPEC, 1 STREAM, 2 DGRAM) in the low one; other values must be rejected (§2.2).
    static func checkFamily(_ byte: UInt8) throws(ProxyProtocolError) {
        guard byte >> 4 <= 3 else { throw .malformed("address family \(byte >> 4), not 0 to 3") }
        guard byte & 0x0F <= 2 else { throw .malformed("transport protocol \(byte & 0x0F), not 0 to 2") }
    }

    /// A complete version 2 header whose fixed fields were checked. LOCAL: the addresses are
    /// ignored, whatever the family. PROXY: TCP over IPv4 (12 address bytes) or IPv6 (36) gives
    /// the endpoints, UNSPEC (`0x00`) none; UDP and UNIX sockets are refused, as a WebSocket
    /// client comes over TCP (the protocol lets a receiver reject families it does not implement).
    /// Bytes past the addresses (TLVs) are skipped.
    static func version2Header(_ header: [UInt8]) throws(ProxyProtocolError) -> ProxyHeader {
        guard header[12] & 0x0F == 1 else { return .local }
        let length = addressLength(header)
        let start = ProxyProtocolLimits.version2FixedBytes
        switch header[13] {
        case 0x00:
            return .unspecified
        case 0x11:
            guard length >= 12 else { throw .malformed("TCP over IPv4 with \(length) address bytes, not 12") }
            return endpoints(header, from: start, addressBytes: 4)
        case 0x21:
            guard length >= 36 else { throw .malformed("TCP over IPv6 with \(length) address bytes, not 36") }
            return endpoints(header, from: start, addressBytes: 16)
        case let other:
            let family = ["UNSPEC", "IPv4", "IPv6", "UNIX"][Int(other >> 4)]
            let transport = ["UNSPEC", "STREAM", "DGRAM"][Int(other & 0x0F)]
            throw .unsupported("a relayed \(family) \(transport) connection (0x\(String(other, radix: 16))), not TCP over IPv4 or IPv6")
        }
    }

    /// Source address, destination address, source port, destination port (§2.2).
    private static func endpoints(_ header: [UInt8], from start: Int, addressBytes: Int) -> ProxyHeader {
        let source = ProxyAddress(bytes: header[start..<(start + addressBytes)])!
        let destination = ProxyAddress(bytes: header[(start + addressBytes)..<(start + 2 * addressBytes)])!
        let ports = start + 2 * addressBytes
        let sourcePort = UInt16(header[ports]) << 8 | UInt16(header[ports + 1])
        let destinationPort = UInt16(header[ports + 2]) << 8 | UInt16(header[ports + 3])
        return .proxied(source: ProxyEndpoint(address: source, port: sourcePort),
                        destination: ProxyEndpoint(address: destination, port: destinationPort))
    }
}
