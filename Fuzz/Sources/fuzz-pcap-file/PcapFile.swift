import Capture
import FuzzSupport

/// A pcap or pcapng file, as `blipscope inspect` reads one: libpcap (``PcapReader``) through
/// ``CaptureImporter`` (packet decoding, TCP reassembly, HTTP heads, WebSocket messages), then
/// every BLIP frame through the inspector. The input is the file.
private let file = TemporaryFile(name: "input.pcap")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    file.write(Array(UnsafeBufferPointer(start: data, count: size)))
    _ = CaptureFileFormat.kind(ofFileAt: file.path)
    do {
        let result = try CaptureImporter().importCapture(fromPcapAt: file.path)
        fuzzCheck(result.connections.count <= result.packetCount, "more connections than packets")
        inspectAll(result.connections)
    } catch {
        _ = "\(error)"
    }
    return 0
}
