import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import NIOCore
import Testing

/// `blipscope export` as a user runs it: the built executable turns a capture file into a pcap
/// that our pcap reader, `inspect` and Wireshark's dissector all read as the same conversation.
@Suite("blipscope export, end to end")
struct ExportCommandTests {
    /// Every message of a connection's events, decoded: (direction, type, number, properties, body).
    static func messages(_ connection: CapturedConnection) throws -> [String] {
        let decoder = ConnectionDecoder()
        var messages: [String] = []
        for event in connection.events {
            guard case .message(_, let payload) = event.kind else { continue }
            let direction: BLIPDirection = event.direction == .clientToServer ? .clientToServer : .serverToClient
            guard let message = try decoder.receive(payload, from: direction).message else { continue }
            messages.append("\(direction) \(message.type)#\(message.number) \(message.properties) "
                            + hexString(message.body))
        }
        return messages
    }

    @Test("a .blipcap becomes a pcap of one TCP stream holding the same frames and messages")
    func captureFileToPcap() async throws {
        let session = try RecordedSession.make()
        let capture = try session.writeCaptureFile()
        let pcap = RecordedSession.temporaryPath(".pcap")
        defer {
            try? FileManager.default.removeItem(atPath: capture)
            try? FileManager.default.removeItem(atPath: pcap)
        }
        let exported = try await BlipscopeExecutable.run(["export", capture, "--pcap", pcap])
        #expect(exported.status == 0, "\(exported.errors)")
        let packetCount = try PcapReader(path: pcap).readAll().count
        #expect(exported.output.hasSuffix("# wrote \(packetCount) packets, 1 TCP streams, to \(pcap)\n"), "\(exported.output)")

        let original = try #require(try importConnections(fromCaptureFileAt: capture).connections.first)
        let connections = try importConnections(fromPcapAt: pcap)
        #expect(connections.count == 1)
        let read = try #require(connections.first)
        #expect(read.kind == .webSocket)
        for direction in CaptureDirection.allCases {
            let frames = PcapExportTests.frames(of: read, direction)
            #expect(frames == PcapExportTests.frames(of: original, direction))
            #expect(frames.count == session.wire.filter { ($0.direction == .clientToServer) == (direction == .clientToServer) }.count)
        }
        let messages = try Self.messages(read)
        #expect(messages.count == 7, "4 requests, 2 replies and an error reply")
        #expect(messages == (try Self.messages(original)))

        // `inspect` reads both files as the same records, ACKs included.
        let fromCapture = try await BlipscopeExecutable.run(["inspect", capture, "--json", "--acks"])
        let fromPcap = try await BlipscopeExecutable.run(["inspect", pcap, "--json", "--acks"])
        #expect(fromCapture.status == 0 && fromPcap.status == 0)
        #expect(fromPcap.output.split(separator: "\n").count >= 7 + 2)
        #expect(fromPcap.output == fromCapture.output)

        // Wireshark's BLIP dissector sees every frame (make setup installs tshark).
        if let tshark = PcapExportTests.tsharkPath {
            let fields = try await PcapExportTests.tshark(["-r", pcap, "-Y", "blip", "-T", "fields", "-e", "blip.messagenum"])
            #expect(fields.split(separator: "\n").count == session.wire.count, "tshark at \(tshark)")
        }
    }

    @Test("a file that is neither a capture file nor a pcap is refused, and no pcap is written")
    func notACapture() async throws {
        let junk = RecordedSession.temporaryPath(".blipcap")
        let pcap = RecordedSession.temporaryPath(".pcap")
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: junk))
        defer { try? FileManager.default.removeItem(atPath: junk) }
        let result = try await BlipscopeExecutable.run(["export", junk, "--pcap", pcap])
        #expect(result.status != 0)
        #expect(result.errors.contains("is neither a BlipScope capture file nor a pcap/pcapng file"), "\(result.errors)")
        #expect(!FileManager.default.fileExists(atPath: pcap))
    }
}
