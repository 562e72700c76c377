import Capture
import FuzzSupport
import NIOCore

/// The live sniffer (`blipscope sniff`) on packets it did not choose: connection tracking,
/// reassembly, HTTP heads, and for a connection joined mid-session the search for where
/// WebSocket frames start (``WebSocketResync``) and BLIP decoding from the middle of a stream.
///
/// Input: a mode byte (bits 0-3: the link type; bit 4: small limits; bit 5: a 1-second idle
/// timeout with packets 0.4 s apart; bit 6: the server port of the seed capture is given;
/// bit 7: ACKs reported), then records `len16 || packet bytes` (the layout of
/// fuzz-capture-packets, so seeds carry over).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let linkTypes: [PcapLinkType] = [.ethernet, .null, .raw, .rawBSDOS, .linktypeRaw, .loop, .linuxSLL, .ipv4,
                                     .ipv6, .linuxSLL2, PcapLinkType(rawValue: 147)]
    let linkType = linkTypes[Int(mode & 0xF) % linkTypes.count]
    var configuration = Sniffer.Configuration(serverPort: mode & 0x40 != 0 ? 48984 : nil)
    if mode & 0x10 != 0 {
        configuration.limits = CaptureLimits(maxOutOfOrderBytesPerDirection: 256, maxWebSocketMessageBytes: 1024,
                                             maxHTTPHeadBytes: 512, maxHTTPBodyBytes: 64)
    }
    let spacing: Int64 = mode & 0x20 != 0 ? 400_000_000 : 1_000_000
    if mode & 0x20 != 0 { configuration.idleTimeout = 1 }
    configuration.includeAcks = mode & 0x80 != 0

    let sniffer = Sniffer(configuration: configuration)
    var open: Set<Int> = []
    func emit(_ output: Sniffer.Output) {
        switch output {
        case .connectionOpened(let index, _, _, _, _, _):
            fuzzCheck(open.insert(index).inserted, "connection \(index) opened twice")
        case .record(let record):
            _ = record.textLine()
        case .captureRecord(_, let record):
            var buffer = ByteBuffer()
            record.encode(into: &buffer)
        case .connectionClosed(let index):
            open.remove(index)
        }
    }
    var index = 0
    while !input.isAtEnd {
        let bytes = input.record()
        let nanoseconds = Int64(index) * spacing
        let packet = PcapPacket(index: index,
                                timestamp: CaptureTimestamp(seconds: 1_700_000_000 + nanoseconds / 1_000_000_000,
                                                            nanoseconds: UInt32(nanoseconds % 1_000_000_000)),
                                linkType: linkType, bytes: bytes, originalLength: bytes.count)
        sniffer.receive(packet, emit: emit)
        fuzzCheck(sniffer.activeConnections <= index + 1, "more connections than packets")
        index += 1
    }
    sniffer.finish(emit: emit)
    fuzzCheck(sniffer.activeConnections == 0, "connections left after finish")
    return 0
}
