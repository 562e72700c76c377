extension ProxyHeader {
    /// The header as a version 1 line, CRLF included (`doc/proxy-protocol.txt` §2.1): `PROXY
    /// TCP4 …` or `PROXY TCP6 …` (by the source's family; the destination is assumed to match),
    /// `PROXY UNKNOWN` for ``unspecified`` and ``local`` (version 1 has no LOCAL). For senders
    /// such as tests and benchmarks; the relay only reads headers.
    public var version1Bytes: [UInt8] {
        guard case let .proxied(source, destination) = self else { return Array("PROXY UNKNOWN\r\n".utf8) }
        let family = if case .ipv4 = source.address { "TCP4" } else { "TCP6" }
        return Array("PROXY \(family) \(source.address) \(destination.address) \(source.port) \(destination.port)\r\n".utf8)
    }

    /// The header in version 2's binary form (§2.2), with `tlvs` (type, value) after the
    /// addresses: LOCAL with no address block for ``local``, PROXY UNSPEC for ``unspecified``.
    public func version2Bytes(tlvs: [(type: UInt8, value: [UInt8])] = []) -> [UInt8] {
        var block: [UInt8] = []
        let command: UInt8, family: UInt8
        switch self {
        case .local:
            (command, family) = (0x20, 0x00)
        case .unspecified:
            (command, family) = (0x21, 0x00)
        case let .proxied(source, destination):
            if case .ipv4 = source.address { family = 0x11 } else { family = 0x21 }
            command = 0x21
            block = source.address.bytes + destination.address.bytes
                + [UInt8(source.port >> 8), UInt8(source.port & 0xFF), UInt8(destination.port >> 8), UInt8(destination.port & 0xFF)]
        }
        for tlv in tlvs {
            block += [tlv.type, UInt8(tlv.value.count >> 8 & 0xFF), UInt8(tlv.value.count & 0xFF)] + tlv.value
        }
        return ProxyHeaderParser.version2Signature + [command, family, UInt8(block.count >> 8 & 0xFF), UInt8(block.count & 0xFF)] + block
    }
}
