import BLIPCore
import BLIPNIO
import Capture
import NIOCore
import NIOHTTP1
import WebSocketWire

/// The synthesized TCP stream of one session's client leg in a live pcap (``PcapObserver``):
/// the HTTP upgrade as the client sent it (secrets redacted) and the 101 it got, each BLIP frame
/// as one WebSocket binary frame (client frames masked), the closes, and the FIN exchange.
struct PcapSessionStream {
    private var tcp: TCPStreamSynthesizer
    private var maskIndex: UInt64

    init(info: SessionInfo, relayPort: Int) {
        let client = Endpoint(ip: Self.ipv4(info.clientAddress) ?? .v4(0x7F00_0001),
                              port: UInt16(clamping: info.clientPort ?? 50_000))
        let server = Endpoint(ip: .v4(0x7F00_0001), port: UInt16(clamping: relayPort == 0 ? 4994 : relayPort))
        tcp = TCPStreamSynthesizer(client: client, server: server, seed: UInt32(truncatingIfNeeded: info.id))
        maskIndex = info.id << 32
    }

    mutating func open(_ info: SessionInfo, at time: CaptureTimestamp) -> [SynthesizedPacket] {
        let request = Capture.HTTPRequestHead(
            method: info.request?.method.rawValue ?? "GET", target: HeaderRedaction.redactTarget(info.target),
            version: info.request.map { "\($0.version)" } ?? "HTTP/1.1",
            headers: HeaderRedaction.redact(CaptureRecord.fields(info.request?.headers)))
        var responseHeaders = HTTPHeaderFields()
        for field in HeaderRedaction.redact(CaptureRecord.fields(info.upstreamResponse?.headers))
        where field.name.lowercased() != "sec-websocket-accept" {
            responseHeaders.append(name: field.name, value: field.value)
        }
        let response = Capture.HTTPResponseHead(version: "HTTP/1.1", status: 101, reason: "Switching Protocols",
                                                headers: responseHeaders)
        var packets = tcp.open(at: time)
        packets += tcp.send(Array(HTTPHeadText.request(request).utf8), from: .client, at: time)
        packets += tcp.send(Array(HTTPHeadText.response(response, answering: request).utf8), from: .server, at: time)
        return packets
    }

    mutating func frame(_ bytes: ByteBuffer, direction: BLIPDirection, at time: CaptureTimestamp) -> [SynthesizedPacket] {
        send(opcode: 0x2, payload: Array(bytes.readableBytesView), direction: direction, at: time)
    }

    mutating func close(_ summary: SessionSummary, at time: CaptureTimestamp) -> [SynthesizedPacket] {
        var packets: [SynthesizedPacket] = []
        for (direction, close) in [(BLIPDirection.clientToServer, summary.clientClose),
                                   (.serverToClient, summary.upstreamClose)] {
            guard let close, !close.abrupt else { continue }
            let payload = WebSocketFrameWriter.closePayload(code: close.code, reason: close.reason)
            packets += send(opcode: 0x8, payload: payload, direction: direction, at: time)
        }
        return packets + tcp.close(from: .client, at: time)
    }

    private mutating func send(opcode: UInt8, payload: [UInt8], direction: BLIPDirection,
                               at time: CaptureTimestamp) -> [SynthesizedPacket] {
        let fromClient = direction == .clientToServer
        let mask = fromClient ? WebSocketMaskingKey.deterministic(index: maskIndex) : nil
        if fromClient { maskIndex += 1 }
        let frame = WebSocketFrameWriter.frame(opcode: opcode, payload: payload, mask: mask)
        return tcp.send(frame, from: fromClient ? .client : .server, at: time)
    }

    private static func ipv4(_ text: String) -> IPAddress? {
        let parts = text.split(separator: ".")
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return .v4(value)
    }
}
