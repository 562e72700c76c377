import CPcap
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import WebSocketWire

/// Writes connections as a classic pcap file (Ethernet, nanosecond timestamps) through libpcap,
/// with TCP/IP made up by ``TCPStreamSynthesizer``, so Wireshark's HTTP, WebSocket and BLIP
/// dissectors decode the session as if it had been captured on the wire.
///
/// - Each connection becomes one TCP stream: handshake, the HTTP upgrade request and response,
///   each WebSocket message as one frame (client frames masked with a deterministic key, server
///   frames not, RFC 6455 §5.3), close frames, and the FIN exchange.
/// - Only what a connection holds is written: traffic that arrived over TLS is written as
///   plaintext; two legs of a relayed session are two streams (different addresses and ports).
/// - Packets of several connections are interleaved by time.
/// - Connections without an HTTP request (kind `other`) are skipped.
/// - Not thread-safe.
public final class PcapExporter {
    public let path: String
    private let dead: OpaquePointer
    private let dumper: OpaquePointer
    private var closed = false
    public private(set) var packetsWritten = 0

    /// Creates (or replaces) the pcap file at `path`, readable by its owner only (mode 0600, as
    /// capture files are: it holds the traffic).
    public init(path: String) throws {
        // libpcap opens with fopen (0666 less the umask); make the file first, private.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            Glibc.close(descriptor)
        }
        guard let dead = pcap_open_dead_with_tstamp_precision(
            Int32(DLT_EN10MB), 65_535, UInt32(PCAP_TSTAMP_PRECISION_NANO)
        ) else {
            throw CaptureError.pcapWriteFailed(path: path, reason: "pcap_open_dead failed")
        }
        guard let dumper = pcap_dump_open(dead, path) else {
            let reason = String(cString: pcap_geterr(dead))
            pcap_close(dead)
            throw CaptureError.pcapWriteFailed(path: path, reason: reason)
        }
        self.path = path
        self.dead = dead
        self.dumper = dumper
    }

    deinit { close() }

    /// Writes `connections` as TCP streams, their packets merged by time.
    public func export(_ connections: [CapturedConnection]) throws {
        var streams: [[SynthesizedPacket]] = []
        for (position, connection) in connections.enumerated() where connection.request != nil {
            streams.append(Self.packets(for: connection, seed: UInt32(position)))
        }
        var cursors = Array(repeating: 0, count: streams.count)
        while true {
            var best: Int?
            for (index, stream) in streams.enumerated() where cursors[index] < stream.count {
                if best == nil || stream[cursors[index]].time < streams[best!][cursors[best!]].time { best = index }
            }
            guard let best else { break }
            try write(streams[best][cursors[best]])
            cursors[best] += 1
        }
        flush()
    }

    /// Appends one packet.
    public func write(_ packet: SynthesizedPacket) throws {
        guard !closed else { throw CaptureError.pcapWriteFailed(path: path, reason: "the exporter is closed") }
        var header = pcap_pkthdr()
        header.ts.tv_sec = Int(packet.time.seconds)
        // With nanosecond precision libpcap stores this field as nanoseconds.
        header.ts.tv_usec = Int(packet.time.nanoseconds)
        header.caplen = UInt32(packet.bytes.count)
        header.len = UInt32(packet.bytes.count)
        packet.bytes.withUnsafeBufferPointer { bytes in
            pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header, bytes.baseAddress)
        }
        packetsWritten += 1
    }

    /// Pushes buffered packets to the file.
    public func flush() { if !closed { pcap_dump_flush(dumper) } }

    /// Flushes and closes the file; later writes fail.
    public func close() {
        guard !closed else { return }
        closed = true
        pcap_dump_close(dumper)
        pcap_close(dead)
    }

    /// Every packet of one connection, in time order.
    static func packets(for connection: CapturedConnection, seed: UInt32) -> [SynthesizedPacket] {
        guard let request = connection.request else { return [] }
        var tcp = TCPStreamSynthesizer(client: connection.client, server: connection.server, seed: seed)
        let start = connection.handshakeTime ?? connection.events.first?.time ?? .zero
        var packets = tcp.open(at: start)
        packets += tcp.send(Array(HTTPHeadText.request(request).utf8), from: .client, at: start)
        if let response = connection.response {
            let head = HTTPHeadText.response(response, answering: request)
            packets += tcp.send(Array(head.utf8), from: .server, at: start)
            if let body = connection.responseBody { packets += tcp.send(Array(body.readableBytesView), from: .server, at: start) }
        }
        var maskIndex: UInt64 = UInt64(seed) << 32
        var last = start
        var closedBy: TCPStreamSynthesizer.Side?
        for event in connection.events {
            last = max(last, event.time)
            let side: TCPStreamSynthesizer.Side = event.direction == .clientToServer ? .client : .server
            let mask = side == .client ? WebSocketMaskingKey.deterministic(index: maskIndex) : nil
            let frame: [UInt8]
            switch event.kind {
            case .message(let opcode, let payload):
                frame = WebSocketFrameWriter.frame(opcode: opcode, payload: payload.readableBytesView, mask: mask)
            case .ping(let payload):
                frame = WebSocketFrameWriter.frame(opcode: 0x9, payload: payload.readableBytesView, mask: mask)
            case .pong(let payload):
                frame = WebSocketFrameWriter.frame(opcode: 0xA, payload: payload.readableBytesView, mask: mask)
            case .close(let code, let reason):
                let payload = WebSocketFrameWriter.closePayload(code: code, reason: reason)
                frame = WebSocketFrameWriter.frame(opcode: 0x8, payload: payload, mask: mask)
            case .tcpClosed:
                if closedBy == nil { closedBy = side }
                continue
            case .error:
                continue
            }
            if side == .client { maskIndex += 1 }
            packets += tcp.send(frame, from: side, at: event.time)
        }
        packets += tcp.close(from: closedBy ?? .client, at: last)
        return packets
    }
}

/// HTTP/1.1 heads as text, completed with the headers a WebSocket upgrade needs when the
/// record lacks them (the relay may store only the end-to-end ones). Public for writers that
/// feed ``TCPStreamSynthesizer`` themselves (the relay's live pcap).
public enum HTTPHeadText {
    public static func request(_ head: HTTPRequestHead) -> String {
        var headers = head.headers
        if headers["Upgrade"] == nil { headers.append(name: "Upgrade", value: "websocket") }
        if headers["Connection"] == nil { headers.append(name: "Connection", value: "Upgrade") }
        if headers["Sec-WebSocket-Version"] == nil { headers.append(name: "Sec-WebSocket-Version", value: "13") }
        if headers["Sec-WebSocket-Key"] == nil { headers.append(name: "Sec-WebSocket-Key", value: defaultKey) }
        return "\(head.method) \(head.target) \(head.version)\r\n" + lines(headers)
    }

    public static func response(_ head: HTTPResponseHead, answering request: HTTPRequestHead) -> String {
        var headers = head.headers
        if head.isSwitchingProtocols {
            if headers["Upgrade"] == nil { headers.append(name: "Upgrade", value: "websocket") }
            if headers["Connection"] == nil { headers.append(name: "Connection", value: "Upgrade") }
            if headers["Sec-WebSocket-Accept"] == nil {
                headers.append(name: "Sec-WebSocket-Accept", value: accept(for: request.headers["Sec-WebSocket-Key"] ?? defaultKey))
            }
        }
        let reason = head.reason.isEmpty ? "" : " \(head.reason)"
        return "\(head.version) \(head.status)\(reason)\r\n" + lines(headers)
    }

    private static let defaultKey = "QmxpcFNjb3BlRXhwb3J0IQ=="

    private static func lines(_ headers: HTTPHeaderFields) -> String {
        headers.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n"
    }

    /// RFC 6455 §4.2.2: base64 of the SHA-1 of the key and the protocol's GUID.
    static func accept(for key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }
}
