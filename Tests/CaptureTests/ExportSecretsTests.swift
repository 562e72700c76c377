import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import NIOCore
import Testing

/// `blipscope export --pcap` redacts by default: a wire capture holding an `Authorization`
/// upgrade header and secret BLIP properties (compressed and not, spanning frames) becomes a
/// pcap without them that our importer, `inspect` and Wireshark decode with no error;
/// `--capture-secrets` keeps them.
@Suite("blipscope export: secrets redacted unless --capture-secrets")
struct ExportSecretsTests {
    static let headerSecret = "hdr-s3cr3tv4lue"

    /// A session whose capture holds the secrets in clear (as a wire capture would).
    static func clearSession() throws -> String {
        var session = RecordedSession()
        session.wire = try CaptureRedactorTests.conversation().wire
        var handshake = session.handshake
        handshake.requestHeaders = HTTPHeaderFields(handshake.requestHeaders.map {
            $0.name == "Authorization" ? .init(name: $0.name, value: "Bearer \(headerSecret)") : $0
        })
        handshake.requestLine = "GET /db/_blipsync?token=q-\(headerSecret) HTTP/1.1"
        let path = RecordedSession.temporaryPath(".blipcap")
        let writer = try CaptureWriter(path: path, sessionID: 7)
        for record in [.handshake(handshake)] + session.records.dropFirst() { try writer.write(record) }
        try writer.close()
        return path
    }

    static func properties(_ connection: CapturedConnection) throws -> [Properties] {
        let decoder = ConnectionDecoder()
        var all: [Properties] = []
        for event in connection.events {
            guard case .message(_, let payload) = event.kind else { continue }
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            let decoded = try decoder.receive(payload, from: direction)
            if case .ignored(let error) = decoded.outcome { Issue.record("ignored: \(error)") }
            if let message = decoded.message { all.append(message.properties) }
        }
        return all
    }

    @Test("a pcap with secrets in clear is exported without them, still decoding everywhere")
    func exportRedacts() async throws {
        let capture = try Self.clearSession()
        let clear = RecordedSession.temporaryPath(".pcap")
        let redacted = RecordedSession.temporaryPath(".pcap")
        defer { for path in [capture, clear, redacted] { try? FileManager.default.removeItem(atPath: path) } }

        // With --capture-secrets, the secrets stay: this pcap stands for a wire capture.
        let kept = try await BlipscopeExecutable.run(["export", capture, "--pcap", clear, "--capture-secrets"])
        #expect(kept.status == 0, "\(kept.errors)")
        let clearConnection = try #require(try importConnections(fromPcapAt: clear).first)
        #expect(clearConnection.request?.headers["Authorization"] == "Bearer \(Self.headerSecret)")
        #expect(try Self.properties(clearConnection).contains { $0["password"] == CaptureRedactorTests.password })

        let exported = try await BlipscopeExecutable.run(["export", clear, "--pcap", redacted])
        #expect(exported.status == 0, "\(exported.errors)")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: redacted)), as: UTF8.self)
        #expect(!text.contains("s3cr3t"), "no secret bytes in the exported pcap")
        let connection = try #require(try importConnections(fromPcapAt: redacted).first)
        #expect(connection.request?.headers["Authorization"] == "Bearer <redacted>")
        #expect(connection.request?.target == "/db/_blipsync?token=<redacted>")
        let properties = try Self.properties(connection)
        #expect(properties.count == 10)
        #expect(!properties.contains { $0.pairs.contains { $0.value.contains("s3cr3t") || $0.value.contains(CaptureRedactorTests.password) } })
        #expect(properties.contains { $0["Authorization"]?.hasPrefix("<redacted>") == true })

        let inspected = try await BlipscopeExecutable.run(["inspect", redacted])
        #expect(inspected.status == 0, "\(inspected.errors)")
        #expect(inspected.output.contains("# 10 messages, 0 problems, 1 connections"), "\(inspected.output)")
        #expect(!inspected.output.contains("s3cr3t"))

        if PcapExportTests.tsharkPath != nil {
            let verbose = try await PcapExportTests.tshark(["-r", redacted, "-V", "-o", "blip.max_uncompressed_size:1024"])
            #expect(verbose.contains("Authorization") && !verbose.contains("s3cr3t"))
            // Wireshark's dissector reads properties from a message's first frame only (wire-format
            // reference §9): the frames after a first one whose properties continue are "malformed"
            // in the clear capture too. Redaction adds no problem of its own.
            func problems(_ path: String) async throws -> [String] {
                try await PcapExportTests.tshark(["-r", path, "-o", "blip.max_uncompressed_size:1024", "-T", "fields",
                                                  "-e", "frame.number", "-e", "_ws.col.Info", "-Y",
                                                  "blip.decompress_buffer_error || _ws.malformed || _ws.expert.severity >= warning"])
                    .split(separator: "\n").map(String.init)
            }
            let clearProblems = try await problems(clear)
            #expect(!clearProblems.isEmpty, "the dissector's known limit: \(clearProblems)")
            #expect(try await problems(redacted) == clearProblems)
        }
    }
}

@Suite("sniff: capture records mask secrets")
struct SniffSecretsTests {
    @Test("a sniffed session with secrets in clear is recorded masked, decoding cleanly")
    func sniffRedacts() throws {
        let capture = try ExportSecretsTests.clearSession()
        let pcap = RecordedSession.temporaryPath(".pcap")
        defer { for path in [capture, pcap] { try? FileManager.default.removeItem(atPath: path) } }
        let exporter = try PcapExporter(path: pcap)
        try exporter.export(try importConnections(fromCaptureFileAt: capture).connections)  // as on the wire
        exporter.close()
        let sniffer = Sniffer(configuration: Sniffer.Configuration(serverPort: 4984))
        var frames: [(BLIPDirection, ByteBuffer)] = []
        var handshake: CaptureRecord.Handshake?
        for packet in try PcapReader(path: pcap).readAll() {
            sniffer.receive(packet) { output in
                guard case .captureRecord(_, let record) = output else { return }
                switch record {
                case .frame(let frame): frames.append((frame.direction, frame.bytes))
                case .handshake(let head): handshake = head
                default: break
                }
            }
        }
        #expect(handshake?.requestHeaders["Authorization"] == "Bearer <redacted>")
        #expect(frames.count > 10)
        let decoder = ConnectionDecoder()
        var properties: [Properties] = []
        for (direction, bytes) in frames {
            if let message = try decoder.receive(bytes, from: direction).message { properties.append(message.properties) }
        }
        #expect(properties.count == 10)
        #expect(!properties.contains { $0.pairs.contains { $0.value.contains("s3cr3t") || $0.value.contains(CaptureRedactorTests.password) } })
        #expect(properties.contains { $0["token"] == nil && $0["SyncGatewaySession"]?.hasPrefix("<redacted>") == true })
    }
}
