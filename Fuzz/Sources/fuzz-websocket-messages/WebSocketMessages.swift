import Capture
import FuzzSupport
import NIOCore

/// ``WebSocketMessageParser``, the capture importer's reader of one direction after the 101.
///
/// Input: a mode byte (bit 0: client or server; bits 1-3: allowed reserved bits; bits 4-5: the
/// message size limit), a count `k` and `k` 16-bit piece sizes, then the stream. Parsed whole and
/// cut into those pieces (as TCP reassembly delivers it), the outputs must be the same; fed
/// after a close, nothing more is parsed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let sender: WebSocketMessageParser.Sender = mode & 1 == 0 ? .client : .server
    let allowedReservedBits = (mode >> 1) & 7
    let limits = [CaptureLimits.default.maxWebSocketMessageBytes, 0, 125, 1024]
    let maxMessageBytes = limits[Int(mode >> 4) & 3]
    var cuts = FuzzInput(input.take(2 * Int(input.byte() % 32)))
    let stream = input.rest()

    let whole = parse([stream], sender: sender, reserved: allowedReservedBits, limit: maxMessageBytes)
    let cut = parse(pieces(of: stream, cuts: &cuts, maxPiece: 64), sender: sender, reserved: allowedReservedBits,
                    limit: maxMessageBytes)
    fuzzCheck(whole == cut, "outputs differ when the stream is cut:\n\(whole)\n\(cut)")
    return 0
}

private func parse(_ reads: [[UInt8]], sender: WebSocketMessageParser.Sender, reserved: UInt8, limit: Int) -> [String] {
    var parser = WebSocketMessageParser(sender: sender, maxMessageBytes: limit, allowedReservedBits: reserved,
                                        streamOffset: 1000)
    var outputs: [String] = []
    var stopped = false
    for read in reads {
        let results = parser.parse(ByteBuffer(fuzzBytes: read))
        if stopped { fuzzCheck(results.isEmpty, "output after an error") }
        for output in results {
            outputs.append(describe(output, limit: limit))
            if case .error = output { stopped = true }
        }
    }
    outputs += parser.finish().map { describe($0, limit: limit) }
    outputs.append("frames \(parser.framesParsed)")
    fuzzCheck(parser.finish().isEmpty, "finish twice gave output")
    return outputs
}

private func describe(_ output: WebSocketMessageParser.Output, limit: Int) -> String {
    switch output {
    case .message(let opcode, let payload):
        fuzzCheck(payload.readableBytes <= limit, "a message over the limit")
        fuzzCheck(opcode == 1 || opcode == 2, "message opcode \(opcode)")
        return "message \(opcode) \(Array(payload.readableBytesView))"
    case .ping(let payload):
        fuzzCheck(payload.readableBytes <= 125, "a long ping")
        return "ping \(Array(payload.readableBytesView))"
    case .pong(let payload):
        return "pong \(Array(payload.readableBytesView))"
    case .close(let code, let reason):
        return "close \(String(describing: code)) \(reason)"
    case .error(let error):
        return "error \(error)"
    }
}
