/// Reads a pcap or pcapng file and returns the WebSocket traffic of every TCP connection in it.
///
/// The pipeline: ``PcapReader`` → ``PacketDecoder`` → ``TCPStreamReassembler`` (per connection
/// and direction) → ``HTTPUpgradeParser`` → ``WebSocketMessageParser``. Nothing here knows BLIP.
///
/// Limits and non-goals:
/// - The whole capture is decoded in memory: every connection's payload is held until the end of
///   the file. Meant for captures of sessions, not for multi-gigabyte traces.
/// - TLS is not decrypted; such connections come back as ``CapturedConnection/Kind/other``.
/// - A connection whose handshake was not captured is returned as `other` too: no attempt is
///   made to find WebSocket frame boundaries in the middle of a stream.
/// - IPv4 fragments are skipped (see ``PacketDecoder``).
/// - Only the first request and response of a connection are decoded.
public struct CaptureImporter: Sendable {
    public var limits: CaptureLimits

    public init(limits: CaptureLimits = .default) { self.limits = limits }

    /// The result of an import, with counts of what was not used.
    public struct Result: Sendable {
        /// Connections that carried payload, by order of their first packet.
        public var connections: [CapturedConnection]
        public var packetCount: Int
        /// Packets that were not TCP over IP, or could not be decoded as such.
        public var skippedPackets: [PacketDecoder.SkipReason: Int]
    }

    /// Imports the file at `path`. Throws if it cannot be opened or read, or if its link type is
    /// not supported; problems inside a connection become ``CapturedEvent/Kind/error(_:)`` events.
    public func importCapture(fromPcapAt path: String) throws -> Result {
        let reader = try PcapReader(path: path)
        guard reader.linkType.isSupported else { throw CaptureError.unsupportedLinkType(reader.linkType.rawValue) }
        var tracker = TCPConnectionTracker(limits: limits)
        var counts = (packets: 0, skipped: [PacketDecoder.SkipReason: Int]())
        while let packet = try reader.next() {
            consume(packet, tracker: &tracker, counts: &counts)
        }
        return result(from: &tracker, counts: counts)
    }

    /// Imports packets already in memory (for example from a live capture or a test).
    public func importCapture(packets: some Sequence<PcapPacket>) -> Result {
        var tracker = TCPConnectionTracker(limits: limits)
        var counts = (packets: 0, skipped: [PacketDecoder.SkipReason: Int]())
        for packet in packets {
            consume(packet, tracker: &tracker, counts: &counts)
        }
        return result(from: &tracker, counts: counts)
    }

    private func consume(
        _ packet: PcapPacket, tracker: inout TCPConnectionTracker,
        counts: inout (packets: Int, skipped: [PacketDecoder.SkipReason: Int])
    ) {
        counts.packets += 1
        switch PacketDecoder.decode(packet) {
        case .tcp(let segment): tracker.receive(segment)
        case .skipped(let reason): counts.skipped[reason, default: 0] += 1
        }
    }

    private func result(
        from tracker: inout TCPConnectionTracker, counts: (packets: Int, skipped: [PacketDecoder.SkipReason: Int])
    ) -> Result {
        var connections: [CapturedConnection] = []
        for reassembled in tracker.finish() {
            if let connection = CapturedConnection(decoding: reassembled, index: connections.count, limits: limits) {
                connections.append(connection)
            }
        }
        return Result(connections: connections, packetCount: counts.packets, skippedPackets: counts.skipped)
    }
}

/// Imports every TCP connection that carried payload from the pcap or pcapng file at `path`:
/// for each, its endpoints, HTTP heads and, after a 101, its WebSocket messages in both
/// directions. See ``CaptureImporter`` for limits.
public func importConnections(fromPcapAt path: String, limits: CaptureLimits = .default) throws -> [CapturedConnection] {
    try CaptureImporter(limits: limits).importCapture(fromPcapAt: path).connections
}
