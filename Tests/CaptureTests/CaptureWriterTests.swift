import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing

@Suite("Capture writer: buffering, back-pressure, rotation, redaction, inspection")
struct CaptureWriterTests {
    static func frame(_ size: Int, _ index: Int = 0) -> CaptureRecord {
        .frame(.init(time: CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: UInt32(index)),
                     direction: .clientToServer, bytes: ByteBuffer(repeating: UInt8(truncatingIfNeeded: index), count: size)))
    }

    static func fileSize(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    @Test("tryWrite buffers without I/O and reports a full buffer; flush makes room")
    func tryWriteBackPressure() throws {
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = CaptureWriter.Options()
        options.maxBufferedBytes = 4096
        options.flushThresholdBytes = 2048
        let writer = try CaptureWriter(path: path, sessionID: 1, options: options)
        #expect(writer.tryWrite(Self.frame(1000, 1)) == .buffered(flushDue: false))
        #expect(writer.tryWrite(Self.frame(1000, 2)) == .buffered(flushDue: false))
        #expect(writer.tryWrite(Self.frame(1000, 3)) == .buffered(flushDue: true))
        #expect(writer.tryWrite(Self.frame(1000, 4)) == .buffered(flushDue: true))
        #expect(writer.tryWrite(Self.frame(1000, 5)) == .wouldExceedBuffer)
        #expect(try Self.fileSize(path) == CaptureFileHeader.size, "tryWrite never writes")
        try writer.flush()
        #expect(writer.bufferedBytes == 0)
        #expect(writer.tryWrite(Self.frame(1000, 5)) == .buffered(flushDue: false))
        // An oversized record still goes in when the buffer is empty, so it can never get stuck.
        try writer.flush()
        #expect(writer.tryWrite(Self.frame(10_000, 6)) == .buffered(flushDue: true))
        try writer.write(.dropped(.init(time: .zero, count: 1, reason: "test")))
        try writer.close()
        #expect(writer.tryWrite(Self.frame(1, 7)) == .wouldExceedBuffer)
        let records = try CaptureReader(path: path).readAll()
        #expect(records.count == 7)
    }

    @Test("write flushes by itself at the record-count threshold; unflushed records stay out of the file")
    func thresholds() throws {
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = CaptureWriter.Options()
        options.flushThresholdRecords = 10
        let writer = try CaptureWriter(path: path, sessionID: 1, options: options)
        for index in 0..<25 { try writer.write(Self.frame(10, index)) }
        // A reader now sees what a kill -9 would leave: the first 20 records.
        let reader = try CaptureReader(path: path)
        #expect(try reader.readAll().count == 20)
        #expect(reader.ending == .clean)
        try writer.close()
        #expect(try CaptureReader(path: path).readAll().count == 25)
        #expect(throws: CaptureError.self) { try writer.write(Self.frame(1)) }
    }

    @Test("an existing capture is never overwritten")
    func noOverwrite() throws {
        let path = try RecordedSession.make().writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect { try CaptureWriter(path: path, sessionID: 1) } throws: {
            ($0 as? CaptureError)?.code == .captureFileOpenFailed
        }
    }

    @Test("rotation: parts by size, each starting with the handshake; the session reads back whole")
    func rotation() throws {
        let directory = RecordedSession.temporaryPath("-dir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try RecordedSession.make()
        var options = CaptureWriter.Options()
        options.flushThresholdRecords = 4
        let rotation = CaptureRotation(directory: directory, session: "s7", maxFileBytes: 40_000)
        let writer = try CaptureWriter(rotation: rotation, sessionID: 7, options: options)
        for record in session.records { try writer.write(record) }
        try writer.close()
        let parts = rotation.existingParts()
        #expect(parts.count >= 3)
        #expect(writer.statistics.filesCreated == parts.count)
        for (index, part) in parts.enumerated() {
            let reader = try CaptureReader(path: part)
            #expect(reader.header.part == UInt32(index + 1))
            guard case .handshake? = try reader.next() else {
                Issue.record("part \(index + 1) does not start with the handshake")
                continue
            }
        }
        let imported = try importConnections(fromCaptureFileAt: parts[0])
        #expect(imported.files.count == parts.count)
        let frames = imported.connections[0].events.filter { if case .message = $0.kind { true } else { false } }
        #expect(frames.count == session.wire.count)
        #expect(CaptureRotation(directory: directory, session: "../x").hasValidSessionName == false)
    }

    @Test("redaction keeps schemes, cookie names and attributes, drops secrets")
    func redaction() {
        let headers = HTTPHeaderFields([
            "Authorization": "Basic dXNlcjpwYXNz", "Cookie": "SyncGatewaySession=abc123; theme=dark",
            "Set-Cookie": "SyncGatewaySession=xyz; Path=/db; HttpOnly", "X-Auth-Token": "t0k3n",
            "Sec-WebSocket-Protocol": "BLIP_3+CBMobile_3",
        ])
        let redacted = HeaderRedaction.redact(headers)
        #expect(redacted["Authorization"] == "Basic <redacted>")
        #expect(redacted["Cookie"] == "SyncGatewaySession=<redacted>; theme=<redacted>")
        #expect(redacted["Set-Cookie"] == "SyncGatewaySession=<redacted>; Path=/db; HttpOnly")
        #expect(redacted["X-Auth-Token"] == "<redacted>")
        #expect(redacted["Sec-WebSocket-Protocol"] == "BLIP_3+CBMobile_3")
        #expect(HeaderRedaction.redactRequestLine("GET /db/_blipsync?client=sgr2&access_token=s3cr3t HTTP/1.1")
            == "GET /db/_blipsync?client=sgr2&access_token=<redacted> HTTP/1.1")
    }

    @Test("inspecting a capture file gives the same records as inspecting the traffic itself")
    func inspectCaptureFile() throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let imported = try importConnections(fromCaptureFileAt: path)
        #expect(imported.connections.count == 1)
        let connection = try #require(imported.connections.first)
        #expect(connection.kind == .webSocket)
        #expect(connection.client.description == "10.1.1.1:51000")
        #expect(connection.request?.target == "/db/_blipsync")
        var lines: [String] = []
        CaptureInspector(includeAcks: true).inspect(connection) { lines.append($0.jsonLine()) }

        // The same frames, inspected straight from memory.
        var direct = connection
        direct.events = session.wire.enumerated().map { index, frame in
            CapturedEvent(time: session.time(index), direction: frame.direction == .clientToServer ? .clientToServer : .serverToClient,
                          kind: .message(opcode: 2, payload: frame.bytes), packetIndex: index)
        } + connection.events.filter { if case .close = $0.kind { true } else { false } }
        var expected: [String] = []
        CaptureInspector(includeAcks: true).inspect(direct) { expected.append($0.jsonLine()) }
        #expect(lines == expected)
        #expect(lines.filter { $0.contains("\"error\"") }.isEmpty)
        #expect(lines.filter { $0.contains("\"type\":\"MSG\"") }.count == 4)
        #expect(lines.contains { $0.contains("ACKMSG") })
    }

    @Test("frames recorded per leg give one connection per leg")
    func splitLegs() throws {
        let session = try RecordedSession.make()
        var records = session.records
        let extra = ByteBuffer(bytes: [0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
        records.insert(.frame(.init(time: session.time(0), direction: .serverToClient, leg: .client, bytes: extra)), at: 1)
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try CaptureWriter(path: path, sessionID: 7)
        for record in records { try writer.write(record) }
        try writer.close()
        let imported = try importConnections(fromCaptureFileAt: path)
        #expect(imported.connections.count == 2)
        let counts = imported.connections.map { $0.events.filter { if case .message = $0.kind { true } else { false } }.count }
        #expect(counts == [session.wire.count + 1, session.wire.count])
        #expect(imported.connections[1].server.description == "10.1.1.3:4985")
        #expect(imported.connections[1].request?.headers["Host"] == "10.1.1.3:4985")
    }
}
