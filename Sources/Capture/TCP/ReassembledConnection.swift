import NIOCore

/// One TCP connection after reassembly, before any application protocol is decoded: for each
/// direction, its contiguous byte chunks, how it ended, and how it began.
struct ReassembledConnection: Sendable {
    /// One direction, named by the endpoint that sent it.
    struct Half: Sendable {
        var sender: Endpoint
        var reassembler: TCPStreamReassembler
        var chunks: [TCPStreamReassembler.Chunk] = []
        /// Bytes lost for good; the chunks stop where the hole starts.
        var gap: (error: CaptureError, timestamp: CaptureTimestamp, packetIndex: Int)?
        var close: (kind: TCPCloseKind, timestamp: CaptureTimestamp, packetIndex: Int)?
        /// Sent a SYN without ACK: this side opened the connection.
        var sentSYN = false
        var sentSYNACK = false

        var byteCount: Int64 { reassembler.deliveredBytes }

        /// The first `count` bytes delivered (fewer if the stream is shorter).
        func prefix(_ count: Int) -> ByteBuffer {
            var prefix = ByteBuffer()
            for chunk in chunks where prefix.readableBytes < count {
                prefix.writeImmutableBuffer(chunk.bytes.getSlice(
                    at: chunk.bytes.readerIndex, length: min(count - prefix.readableBytes, chunk.bytes.readableBytes)
                )!)
            }
            return prefix
        }
    }

    /// File position of the connection's first packet.
    let firstPacketIndex: Int
    /// `halves[0]` is sent by the endpoint whose packet came first, `halves[1]` by the other.
    var halves: [Half]
    /// The ISN of the SYN that opened the connection, to tell a retransmitted SYN from a new one.
    private(set) var openingSYNSequence: UInt32?
    private(set) var lastTimestamp: CaptureTimestamp
    private(set) var lastPacketIndex: Int

    init(first segment: TCPSegment, limits: CaptureLimits) {
        let reassembler = TCPStreamReassembler(maxOutOfOrderBytes: limits.maxOutOfOrderBytesPerDirection)
        firstPacketIndex = segment.packetIndex
        halves = [
            Half(sender: segment.source, reassembler: reassembler),
            Half(sender: segment.destination, reassembler: reassembler),
        ]
        lastTimestamp = segment.timestamp
        lastPacketIndex = segment.packetIndex
    }

    /// Whether either side has sent FIN or RST.
    var hasClosed: Bool { halves.contains { $0.close != nil } }

    /// Whether a SYN (without ACK) carrying `sequenceNumber` opens a new connection on this
    /// 4-tuple rather than repeating this one's opening SYN.
    func isReopened(bySYN sequenceNumber: UInt32) -> Bool {
        if hasClosed { return true }
        if let openingSYNSequence { return openingSYNSequence != sequenceNumber }
        return false
    }

    mutating func receive(_ segment: TCPSegment) {
        let side = halves[0].sender == segment.source ? 0 : 1
        lastTimestamp = max(lastTimestamp, segment.timestamp)
        lastPacketIndex = segment.packetIndex
        let flags = segment.flags
        if flags.contains(.syn) {
            if flags.contains(.ack) {
                halves[side].sentSYNACK = true
            } else {
                halves[side].sentSYN = true
                if openingSYNSequence == nil { openingSYNSequence = segment.sequenceNumber }
            }
        }
        if flags.contains(.rst) {
            if halves[side].close == nil {
                halves[side].close = (.rst, segment.timestamp, segment.packetIndex)
            }
            return
        }
        if flags.contains(.fin), halves[side].close == nil {
            halves[side].close = (.fin, segment.timestamp, segment.packetIndex)
        }
        record(halves[side].reassembler.receive(segment), side: side)
    }

    /// The capture holds no more packets of this connection: report what is still missing.
    mutating func finish() {
        for side in halves.indices {
            record(halves[side].reassembler.finish(timestamp: lastTimestamp, packetIndex: lastPacketIndex), side: side)
        }
    }

    private mutating func record(_ outputs: [TCPStreamReassembler.Output], side: Int) {
        for output in outputs {
            switch output {
            case .bytes(let chunk): halves[side].chunks.append(chunk)
            case let .gap(error, timestamp, packetIndex): halves[side].gap = (error, timestamp, packetIndex)
            }
        }
    }
}
