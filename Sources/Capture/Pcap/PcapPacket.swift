/// One packet record as read from a capture file.
public struct PcapPacket: Sendable {
    /// 0-based position in the file. Wireshark's "frame number" is `index + 1`.
    public var index: Int
    public var timestamp: CaptureTimestamp
    public var linkType: PcapLinkType
    /// The captured bytes, starting with the link-layer header. May be shorter than
    /// ``originalLength`` when the capture used a snap length.
    public var bytes: [UInt8]
    /// The packet's length on the wire.
    public var originalLength: Int

    public init(index: Int, timestamp: CaptureTimestamp, linkType: PcapLinkType, bytes: [UInt8], originalLength: Int) {
        self.index = index
        self.timestamp = timestamp
        self.linkType = linkType
        self.bytes = bytes
        self.originalLength = originalLength
    }

    /// Whether the capture kept fewer bytes than the packet had.
    public var isTruncated: Bool { bytes.count < originalLength }
}
