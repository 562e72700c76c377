import CPcap

extension PcapPacket {
    /// A packet from one libpcap record, read with nanosecond timestamp precision (so the
    /// header's `tv_usec` field holds nanoseconds). Shared by the file reader and the live source.
    init(index: Int, record: pcap_pkthdr, data: UnsafePointer<UInt8>, linkType: PcapLinkType) {
        self.init(index: index,
                  timestamp: CaptureTimestamp(seconds: Int64(record.ts.tv_sec),
                                              nanoseconds: UInt32(truncatingIfNeeded: record.ts.tv_usec)),
                  linkType: linkType,
                  bytes: Array(UnsafeBufferPointer(start: data, count: Int(record.caplen))),
                  originalLength: Int(record.len))
    }
}
