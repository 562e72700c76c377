import NIOCore

/// The parts of one captured TCP segment that reassembly needs. Checksums are not verified
/// (captures taken on the sending host usually carry offloaded, not-yet-computed checksums).
public struct TCPSegment: Sendable {
    public struct Flags: OptionSet, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let fin = Flags(rawValue: 0x01)
        public static let syn = Flags(rawValue: 0x02)
        public static let rst = Flags(rawValue: 0x04)
        public static let psh = Flags(rawValue: 0x08)
        public static let ack = Flags(rawValue: 0x10)
    }

    public var source: Endpoint
    public var destination: Endpoint
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    public var flags: Flags
    /// The captured payload. If the capture's snap length cut the packet, this holds only the
    /// captured part, and the missing rest later shows up as a gap in the stream.
    public var payload: ByteBuffer
    public var timestamp: CaptureTimestamp
    /// 0-based position of the packet in the file.
    public var packetIndex: Int

    public init(
        source: Endpoint, destination: Endpoint, sequenceNumber: UInt32, acknowledgmentNumber: UInt32 = 0,
        flags: Flags, payload: ByteBuffer, timestamp: CaptureTimestamp, packetIndex: Int
    ) {
        self.source = source
        self.destination = destination
        self.sequenceNumber = sequenceNumber
        self.acknowledgmentNumber = acknowledgmentNumber
        self.flags = flags
        self.payload = payload
        self.timestamp = timestamp
        self.packetIndex = packetIndex
    }
}
