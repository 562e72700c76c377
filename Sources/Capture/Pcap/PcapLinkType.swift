/// A capture's link-layer header type, as libpcap reports it (`pcap_datalink`, a `DLT_` value).
///
/// Only the types below can be decoded by ``PacketDecoder``; other values still come out of
/// ``PcapReader`` so a caller can say which type it met.
public struct PcapLinkType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// BSD loopback: a 4-byte address family in the capturing host's byte order.
    public static let null = PcapLinkType(rawValue: 0)
    /// Ethernet II, with or without 802.1Q / 802.1ad VLAN tags.
    public static let ethernet = PcapLinkType(rawValue: 1)
    /// Raw IPv4 or IPv6 (`DLT_RAW`: 12 on most systems, 14 on BSD/OS; `LINKTYPE_RAW` is 101).
    public static let raw = PcapLinkType(rawValue: 12)
    public static let rawBSDOS = PcapLinkType(rawValue: 14)
    public static let linktypeRaw = PcapLinkType(rawValue: 101)
    /// OpenBSD loopback: like `null` but the family is always big-endian.
    public static let loop = PcapLinkType(rawValue: 108)
    /// Linux "cooked" capture, version 1 (16-byte header), as from `tcpdump -i any`.
    public static let linuxSLL = PcapLinkType(rawValue: 113)
    /// Raw IPv4 only / raw IPv6 only.
    public static let ipv4 = PcapLinkType(rawValue: 228)
    public static let ipv6 = PcapLinkType(rawValue: 229)
    /// Linux "cooked" capture, version 2 (20-byte header).
    public static let linuxSLL2 = PcapLinkType(rawValue: 276)

    /// Whether ``PacketDecoder`` understands this type.
    public var isSupported: Bool {
        switch self {
        case .null, .ethernet, .raw, .rawBSDOS, .linktypeRaw, .loop, .linuxSLL, .ipv4, .ipv6, .linuxSLL2: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .null: "NULL"
        case .ethernet: "EN10MB"
        case .raw, .rawBSDOS, .linktypeRaw: "RAW"
        case .loop: "LOOP"
        case .linuxSLL: "LINUX_SLL"
        case .ipv4: "IPV4"
        case .ipv6: "IPV6"
        case .linuxSLL2: "LINUX_SLL2"
        default: "DLT \(rawValue)"
        }
    }
}
