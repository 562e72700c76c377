import CPcap

/// Reads packet records from a pcap or pcapng file through libpcap (`pcap_open_offline`).
///
/// - Timestamps are requested with nanosecond precision, so both microsecond and nanosecond
///   files keep their full precision.
/// - Byte-swapped pcap files and pcapng are handled by libpcap. A pcapng file whose interfaces
///   have different link types is rejected by libpcap when it reaches the second interface.
/// - Not thread-safe: use one reader from one task. It owns a libpcap handle, closed on deinit.
/// - Live capture is not handled here.
public final class PcapReader {
    private let handle: OpaquePointer
    /// The file's link type (of its first interface, for pcapng).
    public let linkType: PcapLinkType
    private var nextIndex = 0

    /// Opens `path`. Throws ``CaptureError/Code/pcapOpenFailed`` if libpcap cannot read it.
    public init(path: String) throws {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let handle = pcap_open_offline_with_tstamp_precision(
            path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer
        ) else {
            throw CaptureError.pcapOpenFailed(path: path, reason: Self.string(fromCString: errorBuffer))
        }
        self.handle = handle
        self.linkType = PcapLinkType(rawValue: UInt32(bitPattern: pcap_datalink(handle)))
    }

    deinit { pcap_close(handle) }

    /// The next packet, or `nil` at the end of the file.
    /// Throws ``CaptureError/Code/pcapReadFailed`` on a damaged or truncated record.
    public func next() throws -> PcapPacket? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        switch pcap_next_ex(handle, &header, &data) {
        case 1:
            guard let header, let data else { return nil }
            defer { nextIndex += 1 }
            return PcapPacket(index: nextIndex, record: header.pointee, data: data, linkType: linkType)
        case PCAP_ERROR_BREAK:
            return nil
        default:
            throw CaptureError.pcapReadFailed(reason: String(cString: pcap_geterr(handle)))
        }
    }

    /// Reads every remaining packet into memory.
    public func readAll() throws -> [PcapPacket] {
        var packets: [PcapPacket] = []
        while let packet = try next() { packets.append(packet) }
        return packets
    }

    private static func string(fromCString buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
