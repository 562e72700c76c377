import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing
import WebSocketWire

@Suite("Sniffer: streaming decode of live traffic")
struct SnifferTests {
    static func records(of outputs: [Sniffer.Output]) -> [InspectRecord] {
        outputs.compactMap { if case .record(let record) = $0 { record } else { nil } }
    }

    @Test("packet by packet it emits the same records as importing the whole capture")
    func sameAsImport() throws {
        let session = try RecordedSession.make()
        let pcap = try PcapExportTests.export(session)
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        var expected: [String] = []
        for connection in try importConnections(fromPcapAt: pcap) {
            CaptureInspector(includeAcks: true).inspect(connection) { expected.append($0.jsonLine()) }
        }
        var configuration = Sniffer.Configuration()
        configuration.includeAcks = true
        let sniffer = Sniffer(configuration: configuration)
        var outputs: [Sniffer.Output] = []
        for packet in try PcapReader(path: pcap).readAll() { sniffer.receive(packet) { outputs.append($0) } }
        #expect(Self.records(of: outputs).map { $0.jsonLine() } == expected)
        #expect(sniffer.activeConnections == 0, "the closed connection is forgotten")
        guard case .connectionOpened(_, _, _, let request, let response, let midSession)? = outputs.first else {
            Issue.record("the first output should open the connection")
            return
        }
        #expect(request?.target == "/db/_blipsync")
        #expect(response?.status == 101)
        #expect(!midSession)
        let frameRecords = outputs.filter { if case .captureRecord(_, .frame) = $0 { true } else { false } }
        #expect(frameRecords.count == session.wire.count)
    }

    @Test("with frames asked for, packet by packet it lists the same frames of multi-frame messages as inspecting the whole capture")
    func framesSameAsImport() throws {
        let session = try RecordedSession.make()
        let pcap = try PcapExportTests.export(session)
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        var expected: [String] = []
        for connection in try importConnections(fromPcapAt: pcap) {
            CaptureInspector(includeFrames: true).inspect(connection) { expected.append($0.jsonLine()) }
        }
        #expect(expected.contains { $0.contains("\"type\":\"FRAME\"") }, "the session has messages of several frames")
        var configuration = Sniffer.Configuration()
        configuration.includeFrames = true
        let sniffer = Sniffer(configuration: configuration)
        var outputs: [Sniffer.Output] = []
        for packet in try PcapReader(path: pcap).readAll() { sniffer.receive(packet) { outputs.append($0) } }
        #expect(Self.records(of: outputs).map { $0.jsonLine() } == expected)
    }

    @Test("a capture that starts mid-session says what it could not recover and decodes the rest")
    func midSession() throws {
        let session = try RecordedSession.make()
        // From the first frame of MSG#2 (compressed) on, without SYN or HTTP.
        let firstIndex = try #require(session.wire.firstIndex { (try? BLIPFrame.parse($0.bytes).number) == 2 })
        var tcp = TCPStreamSynthesizer(client: Endpoint(ip: .v4(0x7F00_0001), port: 50_123),
                                       server: Endpoint(ip: .v4(0x7F00_0001), port: 4984))
        var packets: [SynthesizedPacket] = []
        for (index, frame) in session.wire.enumerated().dropFirst(firstIndex) {
            let fromClient = frame.direction == .clientToServer
            let bytes = WebSocketFrameWriter.frame(
                opcode: 2, payload: frame.bytes.readableBytesView,
                mask: fromClient ? WebSocketMaskingKey.deterministic(index: UInt64(index)) : nil)
            packets += tcp.send(bytes, from: fromClient ? .client : .server, at: session.time(index))
        }
        let sniffer = Sniffer(configuration: Sniffer.Configuration(serverPort: 4984))
        var outputs: [Sniffer.Output] = []
        for (index, packet) in packets.enumerated() {
            let pcapPacket = PcapPacket(index: index, timestamp: packet.time, linkType: .ethernet, bytes: packet.bytes,
                                        originalLength: packet.bytes.count)
            sniffer.receive(pcapPacket) { outputs.append($0) }
        }
        guard case .connectionOpened(_, let client, let server, nil, nil, true)? = outputs.first else {
            Issue.record("expected a mid-session connection, got \(String(describing: outputs.first))")
            return
        }
        #expect(client.port == 50_123 && server.port == 4984)
        let lines = Self.records(of: outputs).map { $0.textLine() }
        #expect(lines.contains { $0.contains("compression state for client could not be recovered") })
        #expect(lines.contains { $0.contains("compression state for server could not be recovered") })
        #expect(lines.contains { $0.contains("checksum state for client unknown") })
        #expect(!lines.contains { $0.contains("does not follow") }, "later checksums verify:\n\(lines.joined(separator: "\n"))")
        #expect(!lines.contains { $0.contains("ERROR") })
        // The uncompressed messages after the cut decode: rev (multi-frame), norev, and the reply to rev.
        let messages = Self.records(of: outputs).compactMap { record -> String? in
            guard case .message(let message) = record.kind else { return nil }
            return "\(message.type)#\(message.number) \(message.profile ?? "")"
        }
        #expect(messages == ["MSG#4 norev", "MSG#3 rev", "RPY#3 "], "norev overtakes the multi-frame rev (§4.3)")
    }
}
