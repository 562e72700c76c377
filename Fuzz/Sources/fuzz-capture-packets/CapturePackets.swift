import Capture
import FuzzSupport

/// Packets in memory through ``CaptureImporter/importCapture(packets:)``: ``PacketDecoder``
/// (link layers, IPv4, IPv6 extension headers, TCP), connection tracking and reassembly, HTTP
/// heads, WebSocket messages, then the inspector. No libpcap: the fuzzer works on the packets.
///
/// Input: a mode byte (bits 0-3: the link type; bit 4: small limits), then records
/// `len16 || packet bytes`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let linkTypes: [PcapLinkType] = [.ethernet, .null, .raw, .rawBSDOS, .linktypeRaw, .loop, .linuxSLL, .ipv4,
                                     .ipv6, .linuxSLL2, PcapLinkType(rawValue: 147)]
    let linkType = linkTypes[Int(mode & 0xF) % linkTypes.count]
    var limits = CaptureLimits.default
    if mode & 0x10 != 0 {
        limits = CaptureLimits(maxOutOfOrderBytesPerDirection: 256, maxWebSocketMessageBytes: 1024,
                               maxHTTPHeadBytes: 512, maxHTTPBodyBytes: 64)
    }
    var packets: [PcapPacket] = []
    while !input.isAtEnd {
        let bytes = input.record()
        let index = packets.count
        packets.append(PcapPacket(index: index, timestamp: CaptureTimestamp(seconds: Int64(index / 1000),
                                                                            nanoseconds: UInt32(index % 1000) * 1_000_000),
                                  linkType: linkType, bytes: bytes, originalLength: bytes.count))
    }
    let result = CaptureImporter(limits: limits).importCapture(packets: packets)
    fuzzCheck(result.packetCount == packets.count, "packets lost")
    fuzzCheck(result.skippedPackets.values.reduce(0, +) <= packets.count, "more skipped than read")
    for connection in result.connections {
        fuzzCheck(connection.clientToServerBytes >= 0 && connection.serverToClientBytes >= 0, "negative byte count")
    }
    inspectAll(result.connections)
    return 0
}
