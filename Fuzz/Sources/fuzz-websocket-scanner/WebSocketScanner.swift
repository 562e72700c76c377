import FuzzSupport
import NIOCore
import WebSocketWire

/// ``WebSocketFrameScanner``, the relay's reader of each hop's bytes.
///
/// Input: a mode byte (bit 0: require masks; bits 1-3: the frame size limit), a count `k` and `k`
/// 16-bit piece sizes, then the stream. The stream is scanned whole and again cut into those
/// pieces, as reads would deliver it: both must find the same frames with the same bytes and
/// end in the same error or the same incomplete tail.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let requiresMask = mode & 1 != 0
    let limits = [1 << 20, 0, 1, 125, 126, 65_535, 65_536, 16 * 1024]
    let maxFrameSize = limits[Int(mode >> 1) & 7]
    var cuts = FuzzInput(input.take(2 * Int(input.byte() % 32)))
    let stream = input.rest()

    let whole = scan([stream], maxFrameSize: maxFrameSize, requiresMask: requiresMask)
    let cut = scan(pieces(of: stream, cuts: &cuts, maxPiece: 64), maxFrameSize: maxFrameSize,
                   requiresMask: requiresMask)
    fuzzCheck(whole.frames == cut.frames, "frames differ when the stream is cut")
    fuzzCheck(whole.error == cut.error, "errors differ: \(String(describing: whole.error)) vs \(String(describing: cut.error))")
    if whole.error == nil {
        fuzzCheck(whole.pending == cut.pending, "pending bytes differ")
        let consumed = whole.frames.reduce(0) { $0 + $1.bytes.count }
        fuzzCheck(consumed + whole.pending == stream.count, "frames and tail do not add up to the stream")
    }
    return 0
}

private struct Scanned: Equatable {
    var header: WebSocketFrameHeader
    var bytes: [UInt8]
}

private func scan(_ reads: [[UInt8]], maxFrameSize: Int, requiresMask: Bool)
    -> (frames: [Scanned], error: WebSocketFrameError?, pending: Int) {
    var scanner = WebSocketFrameScanner(maxFrameSize: maxFrameSize, requiresMask: requiresMask)
    var frames: [Scanned] = []
    for read in reads {
        scanner.append(ByteBuffer(fuzzBytes: read))
        do {
            while let frame = try scanner.next() {
                let bytes = Array(scanner.bytes(from: frame.start, to: frame.end).readableBytesView)
                let header = frame.header
                fuzzCheck(header.payloadLength <= UInt64(maxFrameSize), "a frame over the limit")
                fuzzCheck(bytes.count == header.frameLength, "frame length")
                fuzzCheck(bytes.withUnsafeBytes { WebSocketFrameHeader.parse($0) } == header,
                          "the header does not parse back from the frame's bytes")
                var payload = scanner.payload(of: frame)
                fuzzCheck(Array(payload.readableBytesView) == Array(bytes[header.headerLength...]), "payload slice")
                if requiresMask { fuzzCheck(header.maskingKey != nil, "an unmasked frame passed") }
                if header.isControl { fuzzCheck(header.fin && header.payloadLength <= 125, "a bad control frame passed") }
                fuzzCheck(header.reservedBits == 0 && header.hasDefinedOpcode, "reserved bits or opcode passed")
                if let key = header.maskingKey {
                    let original = Array(payload.readableBytesView)
                    key.unmask(&payload)
                    key.unmask(&payload)
                    fuzzCheck(Array(payload.readableBytesView) == original, "masking twice is not the identity")
                }
                frames.append(Scanned(header: header, bytes: bytes))
            }
        } catch {
            return (frames, error, scanner.pendingBytes)
        }
    }
    return (frames, nil, scanner.pendingBytes)
}
