import NIOCore

/// Puts one direction of one TCP connection back in order: segments in, contiguous bytes out.
///
/// - Sequence numbers are unwrapped into 64-bit stream offsets relative to the first data byte
///   (ISN + 1 when the SYN was seen), so 32-bit wraparound is invisible to callers.
/// - Retransmitted and overlapping bytes are delivered once; where copies differ, the copy
///   captured first wins.
/// - Out-of-order bytes wait until the hole before them is filled, up to `maxOutOfOrderBytes`.
///   Past that limit, or at ``finish(timestamp:packetIndex:)`` while bytes are still missing,
///   the hole is reported once as a `.gap` output and the reassembler stops: a byte stream with
///   a hole cannot be parsed further.
/// - Each chunk carries the timestamp of the segment that completed it. If the file's
///   timestamps run backwards, a chunk's timestamp is raised to that of the chunk before it, so
///   timestamps never decrease within a direction.
/// - Without a SYN (capture started mid-connection) the first data segment seen defines offset
///   0; bytes before it that arrive later are treated as retransmissions and dropped.
public struct TCPStreamReassembler: Sendable {
    /// Contiguous bytes, in stream order.
    public struct Chunk: Sendable {
        public var bytes: ByteBuffer
        /// Offset of the first byte in the stream (0 = first data byte).
        public var streamOffset: Int64
        public var timestamp: CaptureTimestamp
        /// File position of the packet whose arrival made these bytes contiguous.
        public var packetIndex: Int
    }

    public enum Output: Sendable {
        case bytes(Chunk)
        /// Bytes are missing; nothing more will be delivered.
        case gap(CaptureError, timestamp: CaptureTimestamp, packetIndex: Int)
    }

    private struct Piece {
        var start: Int64
        var bytes: ByteBuffer
        var timestamp: CaptureTimestamp
        var end: Int64 { start + Int64(bytes.readableBytes) }
    }

    public let maxOutOfOrderBytes: Int
    /// The sequence number of stream offset 0, once known.
    public private(set) var initialSequenceNumber: UInt32?
    public private(set) var sawSYN = false
    /// Bytes delivered so far; also the offset of the next byte expected.
    public private(set) var deliveredBytes: Int64 = 0
    /// Stream offset of the FIN, once seen.
    public private(set) var finOffset: Int64?
    public private(set) var hasFailed = false
    /// Segments (or parts of them) dropped because their bytes had already been received.
    public private(set) var duplicateSegments = 0

    private var pending = CircularBuffer<Piece>()
    private var pendingBytes = 0
    private var lastTimestamp = CaptureTimestamp.zero

    public init(maxOutOfOrderBytes: Int = CaptureLimits.default.maxOutOfOrderBytesPerDirection) {
        self.maxOutOfOrderBytes = maxOutOfOrderBytes
    }

    /// Feeds one segment sent in this direction. SYN and FIN flags are honoured; RST is not
    /// this type's concern.
    public mutating func receive(_ segment: TCPSegment) -> [Output] {
        var sequence = segment.sequenceNumber
        if segment.flags.contains(.syn) {
            if initialSequenceNumber == nil { initialSequenceNumber = sequence &+ 1 }
            sawSYN = true
            sequence &+= 1
        }
        return receive(
            sequenceNumber: sequence, payload: segment.payload, fin: segment.flags.contains(.fin),
            timestamp: segment.timestamp, packetIndex: segment.packetIndex
        )
    }

    /// Feeds payload that starts at `sequenceNumber` (for a SYN segment, pass ISN + 1).
    public mutating func receive(
        sequenceNumber: UInt32, payload: ByteBuffer, fin: Bool = false,
        timestamp: CaptureTimestamp, packetIndex: Int
    ) -> [Output] {
        guard !hasFailed else { return [] }
        if initialSequenceNumber == nil {
            guard payload.readableBytes > 0 || fin else { return [] }
            initialSequenceNumber = sequenceNumber
        }
        let start = streamOffset(of: sequenceNumber)
        let end = start + Int64(payload.readableBytes)
        if fin, finOffset == nil { finOffset = end }
        guard end > deliveredBytes else {
            if payload.readableBytes > 0 { duplicateSegments += 1 }
            return []
        }
        store(payload, from: start, timestamp: timestamp)
        var outputs = drain(packetIndex: packetIndex)
        if pendingBytes > maxOutOfOrderBytes {
            let error = CaptureError.outOfOrderLimitExceeded(limit: maxOutOfOrderBytes, streamOffset: deliveredBytes)
            outputs.append(fail(error, timestamp: timestamp, packetIndex: packetIndex))
        }
        return outputs
    }

    /// Declares the end of the capture for this direction. Reports a gap if bytes before a
    /// buffered segment or before the FIN never arrived.
    public mutating func finish(timestamp: CaptureTimestamp, packetIndex: Int) -> [Output] {
        guard !hasFailed else { return [] }
        let holeEnd = pending.first?.start ?? finOffset ?? deliveredBytes
        guard holeEnd > deliveredBytes else { return [] }
        let error = CaptureError.missingBytes(count: holeEnd - deliveredBytes, streamOffset: deliveredBytes)
        return [fail(error, timestamp: max(timestamp, lastTimestamp), packetIndex: packetIndex)]
    }

    /// Unwraps a 32-bit sequence number to the stream offset nearest the next expected byte.
    private func streamOffset(of sequenceNumber: UInt32) -> Int64 {
        let base = initialSequenceNumber ?? sequenceNumber
        let expected = base &+ UInt32(truncatingIfNeeded: deliveredBytes)
        return deliveredBytes + Int64(Int32(bitPattern: sequenceNumber &- expected))
    }

    /// Keeps the parts of `payload` not already held, so `pending` stays sorted and disjoint.
    private mutating func store(_ payload: ByteBuffer, from start: Int64, timestamp: CaptureTimestamp) {
        let end = start + Int64(payload.readableBytes)
        var cursor = max(start, deliveredBytes)
        var index = firstPendingIndex(endingAfter: cursor)
        var storedAny = false
        while cursor < end {
            if index < pending.count, pending[offset: index].start <= cursor {
                cursor = max(cursor, pending[offset: index].end)
                index += 1
                continue
            }
            let stop = index < pending.count ? min(end, pending[offset: index].start) : end
            let slice = payload.getSlice(
                at: payload.readerIndex + Int(cursor - start), length: Int(stop - cursor)
            )!
            let piece = Piece(start: cursor, bytes: slice, timestamp: timestamp)
            if index == pending.count {
                pending.append(piece)
            } else {
                pending.insert(piece, at: pending.index(pending.startIndex, offsetBy: index))
            }
            pendingBytes += slice.readableBytes
            storedAny = true
            index += 1
            cursor = stop
        }
        if !storedAny, payload.readableBytes > 0 { duplicateSegments += 1 }
    }

    /// Binary search: the first pending piece whose end lies beyond `offset`.
    private func firstPendingIndex(endingAfter offset: Int64) -> Int {
        var low = 0, high = pending.count
        while low < high {
            let middle = (low + high) / 2
            if pending[offset: middle].end <= offset {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    private mutating func drain(packetIndex: Int) -> [Output] {
        var outputs: [Output] = []
        while let first = pending.first, first.start == deliveredBytes {
            _ = pending.popFirst()
            pendingBytes -= first.bytes.readableBytes
            lastTimestamp = max(lastTimestamp, first.timestamp)
            outputs.append(.bytes(Chunk(
                bytes: first.bytes, streamOffset: first.start, timestamp: lastTimestamp, packetIndex: packetIndex
            )))
            deliveredBytes = first.end
        }
        return outputs
    }

    private mutating func fail(_ error: CaptureError, timestamp: CaptureTimestamp, packetIndex: Int) -> Output {
        hasFailed = true
        pending.removeAll()
        pendingBytes = 0
        return .gap(error, timestamp: timestamp, packetIndex: packetIndex)
    }
}
