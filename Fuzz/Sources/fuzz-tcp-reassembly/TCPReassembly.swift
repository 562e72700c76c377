import Capture
import FuzzSupport
import NIOCore

/// ``TCPStreamReassembler`` against the stream it must rebuild: segments are slices of a stream
/// at offsets the input picks (out of order, overlapping, repeated, before the start, across
/// the 32-bit wrap of sequence numbers), and every byte delivered must be the stream's byte at
/// that offset, in order, each once. A segment of other bytes may be injected; the content is
/// then no longer compared (only order and bounds).
///
/// Input: a mode byte (bit 0: open with a SYN; bits 1-2: the out-of-order limit), the initial
/// sequence number (32 bits), the stream (`len16 || bytes`), then segments
/// `kind || offset16 || length16` (kind bit 0: FIN; bit 1: injected bytes instead of a slice).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let limits = [CaptureLimits.default.maxOutOfOrderBytesPerDirection, 0, 16, 1024]
    let maxOutOfOrder = limits[Int(mode >> 1) & 3]
    let isn = input.uint32()
    let stream = input.record()
    var reassembler = TCPStreamReassembler(maxOutOfOrderBytes: maxOutOfOrder)
    var packetIndex = 0
    /// Where the reassembler's offset 0 is in `stream`: the first segment that carries bytes.
    var base: Int?
    var delivered: Int64 = 0
    var injected = false
    var failed = false

    func absorb(_ outputs: [TCPStreamReassembler.Output]) {
        for output in outputs {
            switch output {
            case .bytes(let chunk):
                fuzzCheck(!failed, "bytes after a gap")
                fuzzCheck(chunk.streamOffset == delivered, "chunk at \(chunk.streamOffset), expected \(delivered)")
                fuzzCheck(chunk.bytes.readableBytes > 0, "an empty chunk")
                if !injected, let base {
                    let start = base + Int(chunk.streamOffset)
                    let end = start + chunk.bytes.readableBytes
                    fuzzCheck(end <= stream.count, "bytes past the end of the stream")
                    fuzzCheck(Array(chunk.bytes.readableBytesView) == Array(stream[start..<end]),
                              "wrong bytes at offset \(chunk.streamOffset)")
                }
                delivered += Int64(chunk.bytes.readableBytes)
            case .gap:
                fuzzCheck(!failed, "a second gap")
                failed = true
            }
        }
        fuzzCheck(reassembler.deliveredBytes == delivered, "deliveredBytes")
        fuzzCheck(reassembler.hasFailed == failed, "hasFailed")
    }

    if mode & 1 != 0 {
        let syn = TCPSegment(source: endpoint(1), destination: endpoint(2), sequenceNumber: isn &- 1, flags: .syn,
                             payload: ByteBuffer(), timestamp: time(0), packetIndex: 0)
        absorb(reassembler.receive(syn))
        base = 0
    }
    while !input.isAtEnd {
        let kind = input.byte()
        let offset = Int(input.uint16()) % (stream.count + 1)
        let length = Int(input.uint16()) % 1500
        packetIndex += 1
        var payload: [UInt8]
        if kind & 2 != 0 {
            payload = input.take(length % 64)
            injected = true
        } else {
            payload = Array(stream[offset..<min(stream.count, offset + length)])
        }
        if base == nil, !payload.isEmpty || kind & 1 != 0 { base = offset }
        let segment = TCPSegment(source: endpoint(1), destination: endpoint(2),
                                 sequenceNumber: isn &+ UInt32(truncatingIfNeeded: offset),
                                 flags: kind & 1 != 0 ? [.fin, .ack] : .ack,
                                 payload: ByteBuffer(fuzzBytes: payload), timestamp: time(packetIndex),
                                 packetIndex: packetIndex)
        absorb(reassembler.receive(segment))
    }
    absorb(reassembler.finish(timestamp: time(packetIndex + 1), packetIndex: packetIndex + 1))
    return 0
}

private func endpoint(_ last: UInt8) -> Endpoint {
    Endpoint(ip: .v4(0x7F00_0000 | UInt32(last)), port: 4984)
}

private func time(_ index: Int) -> CaptureTimestamp {
    CaptureTimestamp(seconds: Int64(index), nanoseconds: 0)
}
