import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import NIOCore

/// A real BLIP conversation produced by two in-memory ``BLIPEndpoint``s: small and compressed
/// requests, a multi-frame message large enough to be ACKed, replies and an error reply.
struct RecordedSession {
    var wire: [(direction: BLIPDirection, bytes: ByteBuffer)] = []
    let start = CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: 0)

    static func make() throws -> RecordedSession {
        let pair = EndpointPair()
        var random = SeededRandom(seed: 42)
        pair.client.send(request: .request(profile: "getCheckpoint", properties: ["client": "abc"]))
        pair.client.send(request: .request(profile: "changes", body: ByteBuffer(bytes: random.bytes(3000, compressible: true)),
                                           compressed: true))
        pair.client.send(request: .request(profile: "rev", properties: ["id": "doc-1"],
                                           body: ByteBuffer(bytes: random.bytes(150_000)), compressed: false))
        pair.client.send(request: .request(profile: "norev", noReply: true))
        try pair.pump { request in
            guard !request.isNoReply else { return }
            switch request.profile {
            case "getCheckpoint":
                pair.server.send(reply: .error(to: request.number, domain: "HTTP", code: 404, message: "missing"))
            case "changes":
                pair.server.send(reply: .reply(to: request, body: ByteBuffer(bytes: random.bytes(2000, compressible: true)),
                                               compressed: true))
            default:
                pair.server.send(reply: .reply(to: request))
            }
        }
        var session = RecordedSession()
        session.wire = pair.wire
        return session
    }

    /// The time of frame `index`: 1 ms apart.
    func time(_ index: Int) -> CaptureTimestamp {
        CaptureTimestamp(seconds: start.seconds, nanoseconds: UInt32(index + 1) * 1_000_000)
    }

    var handshake: CaptureRecord.Handshake {
        CaptureRecord.Handshake(
            time: start, sessionID: 7, clientAddress: "10.1.1.1:51000",
            requestLine: "GET /db/_blipsync HTTP/1.1",
            requestHeaders: HTTPHeaderFields([
                "Host": "10.1.1.2:4984", "Upgrade": "websocket", "Connection": "Upgrade",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3", "Authorization": "Basic <redacted>",
            ]),
            upstreamURL: "ws://10.1.1.3:4985/db/_blipsync", responseStatus: 101, responseReason: "Switching Protocols",
            responseHeaders: HTTPHeaderFields([
                "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
                "Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3",
            ]),
            subprotocol: "BLIP_3+CBMobile_3"
        )
    }

    /// Handshake, every frame (pass-through), and both closes.
    var records: [CaptureRecord] {
        var records: [CaptureRecord] = [.handshake(handshake)]
        for (index, frame) in wire.enumerated() {
            records.append(.frame(.init(time: time(index), direction: frame.direction, bytes: frame.bytes)))
        }
        records.append(.close(.init(time: time(wire.count), side: .client, code: 1000, reason: "bye")))
        records.append(.close(.init(time: time(wire.count + 1), side: .upstream, code: 1000, reason: "")))
        return records
    }

    /// A fresh path in the temporary directory (not created).
    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("blipscope-\(UUID().uuidString)\(suffix)").path
    }

    /// Writes ``records`` to a new capture file; returns its path.
    func writeCaptureFile() throws -> String {
        let path = Self.temporaryPath(".blipcap")
        let writer = try CaptureWriter(path: path, sessionID: 7)
        for record in records { try writer.write(record) }
        try writer.close()
        return path
    }
}
