import BLIPCore
import BLIPTestSupport
import Capture
import Foundation
import NIOCore
import Testing

@Suite("pcap export: synthesized TCP/IP that Wireshark and our importer decode")
struct PcapExportTests {
    static let tsharkPath: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark", "/opt/homebrew/bin/tshark"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Exports `session`'s capture file (with `extraRecords`) and returns the pcap path.
    static func export(_ session: RecordedSession, records: [CaptureRecord]? = nil) throws -> String {
        let capture = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let writer = try CaptureWriter(path: capture, sessionID: 7)
        for record in records ?? session.records { try writer.write(record) }
        try writer.close()
        let imported = try importConnections(fromCaptureFileAt: capture)
        let pcap = RecordedSession.temporaryPath(".pcap")
        let exporter = try PcapExporter(path: pcap)
        try exporter.export(imported.connections)
        exporter.close()
        let mode = try FileManager.default.attributesOfItem(atPath: pcap)[.posixPermissions] as? Int
        #expect(mode == 0o600, "a pcap holds the traffic: its owner's only")
        return pcap
    }

    static func frames(of connection: CapturedConnection, _ direction: CaptureDirection) -> [[UInt8]] {
        connection.events(direction).compactMap { event in
            if case .message(_, let payload) = event.kind { Array(payload.readableBytesView) } else { nil }
        }
    }

    @Test("re-importing the export gives back every frame, byte for byte, and they all decode")
    func roundTripThroughOurImporter() throws {
        let session = try RecordedSession.make()
        let pcap = try Self.export(session)
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        let connections = try importConnections(fromPcapAt: pcap)
        #expect(connections.count == 1)
        let connection = try #require(connections.first)
        #expect(connection.kind == .webSocket)
        #expect(connection.roleEvidence == .syn)
        #expect(connection.client.description == "10.1.1.1:51000")
        #expect(connection.server.description == "10.1.1.2:4984")
        #expect(connection.response?.headers["Sec-WebSocket-Protocol"] == "BLIP_3+CBMobile_3")
        for direction in CaptureDirection.allCases {
            let blip: BLIPDirection = direction == .clientToServer ? .clientToServer : .serverToClient
            let expected = session.wire.filter { $0.direction == blip }.map { Array($0.bytes.readableBytesView) }
            #expect(Self.frames(of: connection, direction) == expected)
        }
        let decoder = ConnectionDecoder()
        var messages = 0
        for event in connection.events {
            guard case .message(_, let payload) = event.kind else { continue }
            let decoded = try decoder.receive(payload, from: event.direction == .clientToServer ? .clientToServer : .serverToClient)
            if decoded.message != nil { messages += 1 }
        }
        #expect(messages == 7)
        let closes = connection.events.compactMap { if case .close(let code, _) = $0.kind { code } else { nil } }
        #expect(closes == [1000, 1000])
        #expect(connection.events.contains { if case .error = $0.kind { true } else { false } } == false)
    }

    @Test("when the legs differ, both are exported as separate TCP streams")
    func twoLegs() throws {
        let session = try RecordedSession.make()
        // The relay answered one request itself on the client leg (an injected ERR for MSG #1).
        var injected = ByteBuffer(bytes: [0x01, 0x02])
        injected.writeBytes([0x00, 0x00, 0x00, 0x00, 0x00])
        var records = session.records
        records.insert(.frame(.init(time: session.time(0), direction: .serverToClient, leg: .client, bytes: injected)), at: 1)
        let pcap = try Self.export(session, records: records)
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        let connections = try importConnections(fromPcapAt: pcap)
        #expect(connections.count == 2)
        #expect(Set(connections.map(\.server.port)) == [4984, 4985])
        let upstream = try #require(connections.first { $0.server.port == 4985 })
        #expect(upstream.kind == .webSocket)
        #expect(upstream.request?.headers["Host"] == "10.1.1.3:4985")
        let client = try #require(connections.first { $0.server.port == 4984 })
        #expect(Self.frames(of: client, .serverToClient).count == Self.frames(of: upstream, .serverToClient).count + 1)
    }

    @Test("IPv4 and TCP checksums are right")
    func checksums() throws {
        let pcap = try Self.export(try RecordedSession.make())
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        let packets = try PcapReader(path: pcap).readAll()
        #expect(packets.count > 100)
        for packet in packets {
            let bytes = packet.bytes
            #expect(Self.onesComplementSum(Array(bytes[14..<34])) == 0xFFFF, "IPv4 header checksum")
            let tcp = Array(bytes[34...])
            let pseudo = Array(bytes[26..<34]) + [0, 6, UInt8(tcp.count >> 8), UInt8(tcp.count & 0xFF)]
            #expect(Self.onesComplementSum(pseudo + tcp) == 0xFFFF, "TCP checksum")
            #expect(tcp.count - 20 <= 1460)
        }
    }

    static func onesComplementSum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var index = 0
        while index < bytes.count {
            sum += UInt32(bytes[index]) << 8 | (index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0)
            index += 2
        }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return UInt16(sum)
    }

    @Test("tshark's BLIP dissector finds every frame with its number, flags and checksum",
          .enabled(if: PcapExportTests.tsharkPath != nil, "tshark is not installed"))
    func tsharkSeesEveryFrame() async throws {
        let session = try RecordedSession.make()
        let pcap = try Self.export(session)
        defer { try? FileManager.default.removeItem(atPath: pcap) }
        let output = try await Self.tshark([
            "-r", pcap, "-Y", "blip", "-T", "fields",
            "-e", "_ws.col.Info", "-e", "blip.messagenum", "-e", "blip.frameflags", "-e", "blip.checksum",
            "-e", "blip.numackbytes",
        ])
        let lines = output.split(separator: "\n").map(String.init)
        let expected = try session.wire.map { frame -> String in
            let parsed = try BLIPFrame.parse(frame.bytes)
            // Wireshark shows the flag bits without the type, which it puts in the Info column.
            let bits = parsed.flags.rawValue & 0xF8
            let flags = "0x" + (bits < 0x10 ? "0" : "") + String(bits, radix: 16)
            let isAck = parsed.flags.type?.isAck == true
            let checksum = isAck ? "" : String(parsed.checksum)
            let acked = isAck ? String(parsed.ackedBytes) : ""
            return "\(parsed.flags.type!)#\(parsed.number)\t\(parsed.number)\t\(flags)\t\(checksum)\t\(acked)"
        }
        #expect(lines.count == expected.count)
        #expect(lines == expected)
        let bad = try await Self.tshark([
            "-r", pcap, "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
            "-Y", "ip.checksum.status == \"Bad\" || tcp.checksum.status == \"Bad\" || tcp.analysis.flags"
                + " || blip.decompress_buffer_error || _ws.malformed || _ws.expert.severity >= warning",
        ])
        #expect(bad.isEmpty, "tshark found bad checksums or TCP problems:\n\(bad)")
    }

    static func tshark(_ arguments: [String]) async throws -> String {
        try await RunningCommand.run(tsharkPath!, arguments).output
    }
}
