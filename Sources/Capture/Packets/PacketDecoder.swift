import NIOCore

/// Decodes a captured packet down to its TCP segment: link layer → IPv4/IPv6 → TCP.
///
/// - Link layers: see ``PcapLinkType/isSupported``. Ethernet may carry any number of 802.1Q /
///   802.1ad VLAN tags.
/// - IPv4 fragments (MF set or a non-zero offset) are **skipped, not reassembled**; TCP stacks
///   avoid fragmentation (path MTU discovery), so this loses data only on unusual networks, and
///   the loss then shows up as a gap in the stream.
/// - IPv6 extension headers (hop-by-hop, routing, destination options, AH) are walked; packets
///   with a fragment header or ESP are skipped.
/// - The IP length fields bound the payload, so Ethernet padding is dropped. A length field of 0
///   (segmentation offload, jumbograms) means "up to the end of the captured bytes".
/// - Checksums are not verified. Non-TCP packets are skipped.
public enum PacketDecoder {
    public enum SkipReason: String, Sendable, Hashable, CaseIterable {
        case unsupportedLinkType, truncated, notIP, notTCP, ipFragment
    }

    public enum Outcome: Sendable {
        case tcp(TCPSegment)
        case skipped(SkipReason)
    }

    public static func decode(_ packet: PcapPacket) -> Outcome {
        let bytes = packet.bytes
        switch ipHeaderOffset(bytes, linkType: packet.linkType) {
        case .skip(let reason): return .skipped(reason)
        case .ip(let offset): return decodeIP(bytes, at: offset, packet: packet)
        }
    }

    private enum LinkHeader {
        case ip(at: Int)
        case skip(SkipReason)
    }

    /// The offset of the IP header, or why there is none.
    private static func ipHeaderOffset(_ bytes: [UInt8], linkType: PcapLinkType) -> LinkHeader {
        switch linkType {
        case .ethernet:
            var offset = 12
            while true {
                guard bytes.count >= offset + 2 else { return .skip(.truncated) }
                let etherType = readUInt16(bytes, offset)
                switch etherType {
                case 0x8100, 0x88A8, 0x9100: offset += 4
                case 0x0800, 0x86DD: return .ip(at: offset + 2)
                default: return .skip(.notIP)
                }
            }
        case .linuxSLL:
            guard bytes.count >= 16 else { return .skip(.truncated) }
            return isIPEtherType(readUInt16(bytes, 14)) ? .ip(at: 16) : .skip(.notIP)
        case .linuxSLL2:
            guard bytes.count >= 20 else { return .skip(.truncated) }
            return isIPEtherType(readUInt16(bytes, 0)) ? .ip(at: 20) : .skip(.notIP)
        case .null, .loop:
            // The family's byte order depends on the capturing host; the IP version nibble is
            // unambiguous, so rely on it instead.
            return bytes.count >= 4 ? .ip(at: 4) : .skip(.truncated)
        case .raw, .rawBSDOS, .linktypeRaw, .ipv4, .ipv6:
            return .ip(at: 0)
        default:
            return .skip(.unsupportedLinkType)
        }
    }

    private static func isIPEtherType(_ value: UInt16) -> Bool { value == 0x0800 || value == 0x86DD }

    private static func decodeIP(_ bytes: [UInt8], at offset: Int, packet: PcapPacket) -> Outcome {
        guard bytes.count > offset else { return .skipped(.truncated) }
        switch bytes[offset] >> 4 {
        case 4: return decodeIPv4(bytes, at: offset, packet: packet)
        case 6: return decodeIPv6(bytes, at: offset, packet: packet)
        default: return .skipped(.notIP)
        }
    }

    private static func decodeIPv4(_ bytes: [UInt8], at offset: Int, packet: PcapPacket) -> Outcome {
        guard bytes.count >= offset + 20 else { return .skipped(.truncated) }
        let headerLength = Int(bytes[offset] & 0x0F) * 4
        let totalLength = Int(readUInt16(bytes, offset + 2))
        let fragmentField = readUInt16(bytes, offset + 6)
        guard headerLength >= 20, bytes.count >= offset + headerLength else { return .skipped(.truncated) }
        guard fragmentField & 0x3FFF == 0 else { return .skipped(.ipFragment) }
        guard bytes[offset + 9] == 6 else { return .skipped(.notTCP) }
        let end = totalLength == 0 ? bytes.count : min(bytes.count, offset + totalLength)
        guard end >= offset + headerLength else { return .skipped(.truncated) }
        let source = IPAddress(networkBytes: bytes[(offset + 12)..<(offset + 16)])
        let destination = IPAddress(networkBytes: bytes[(offset + 16)..<(offset + 20)])
        let tcpRange = (offset + headerLength)..<end
        return decodeTCP(bytes, range: tcpRange, source: source, destination: destination, packet: packet)
    }

    private static func decodeIPv6(_ bytes: [UInt8], at offset: Int, packet: PcapPacket) -> Outcome {
        guard bytes.count >= offset + 40 else { return .skipped(.truncated) }
        let payloadLength = Int(readUInt16(bytes, offset + 4))
        let end = payloadLength == 0 ? bytes.count : min(bytes.count, offset + 40 + payloadLength)
        var nextHeader = bytes[offset + 6]
        var cursor = offset + 40
        while nextHeader != 6 {
            guard cursor + 2 <= end else { return .skipped(.truncated) }
            let following = bytes[cursor]
            switch nextHeader {
            case 0, 43, 60: cursor += (Int(bytes[cursor + 1]) + 1) * 8
            case 51: cursor += (Int(bytes[cursor + 1]) + 2) * 4
            case 44: return .skipped(.ipFragment)
            default: return .skipped(.notTCP)
            }
            nextHeader = following
        }
        let source = IPAddress(networkBytes: bytes[(offset + 8)..<(offset + 24)])
        let destination = IPAddress(networkBytes: bytes[(offset + 24)..<(offset + 40)])
        let tcpRange = cursor..<max(cursor, end)
        return decodeTCP(bytes, range: tcpRange, source: source, destination: destination, packet: packet)
    }

    private static func decodeTCP(
        _ bytes: [UInt8], range: Range<Int>, source: IPAddress, destination: IPAddress, packet: PcapPacket
    ) -> Outcome {
        let start = range.lowerBound
        guard range.count >= 20 else { return .skipped(.truncated) }
        let dataOffset = Int(bytes[start + 12] >> 4) * 4
        guard dataOffset >= 20, range.count >= dataOffset else { return .skipped(.truncated) }
        let segment = TCPSegment(
            source: Endpoint(ip: source, port: readUInt16(bytes, start)),
            destination: Endpoint(ip: destination, port: readUInt16(bytes, start + 2)),
            sequenceNumber: readUInt32(bytes, start + 4),
            acknowledgmentNumber: readUInt32(bytes, start + 8),
            flags: TCPSegment.Flags(rawValue: bytes[start + 13] & 0x1F),
            payload: ByteBuffer(bytes: bytes[(start + dataOffset)..<range.upperBound]),
            timestamp: packet.timestamp,
            packetIndex: packet.index
        )
        return .tcp(segment)
    }

    private static func readUInt16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(readUInt16(bytes, offset)) << 16 | UInt32(readUInt16(bytes, offset + 2))
    }
}
