import BLIPCore
import Capture
import Foundation
import NIOCore
import Testing

@Suite("Capture file format: writer, reader, migration, rotation")
struct CaptureFileTests {
    @Test("every record kind survives a write and a read")
    func roundTrip() throws {
        let session = try RecordedSession.make()
        let time = session.time(0)
        var records = session.records
        records += [
            .messageHead(.init(time: time, direction: .clientToServer, number: 3,
                               flags: FrameFlags(type: .request, compressed: true), properties: ["Profile": "rev"])),
            .verdict(.init(time: time, direction: .serverToClient, number: 3, action: "deny", reason: "rule 2")),
            .dropped(.init(time: time, count: 12, reason: "disk too slow")),
            .note(time: time, text: "héllo"),
            .frame(.init(time: time, direction: .serverToClient, leg: .upstream, bytes: ByteBuffer(bytes: [1, 2, 3]))),
        ]
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try CaptureWriter(path: path, sessionID: 99)
        for record in records { try writer.write(record) }
        try writer.close()

        let reader = try CaptureReader(path: path)
        #expect(reader.header.sessionID == 99)
        #expect(reader.header.part == 1)
        let read = try reader.readAll()
        #expect(reader.ending == .clean)
        #expect(read.count == records.count)
        for (original, copy) in zip(records, read) {
            #expect(Self.describe(original) == Self.describe(copy))
        }
    }

    @Test("a record cut short by kill -9 ends the file cleanly, everything before it is read")
    func truncatedTail() throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        // Cut the last record (the upstream close) in the middle.
        try full.prefix(full.count - 5).write(to: URL(fileURLWithPath: path))
        let reader = try CaptureReader(path: path)
        let records = try reader.readAll()
        #expect(records.count == session.records.count - 1)
        guard case .truncated(_, let bytes)? = reader.ending else {
            Issue.record("expected a truncated ending, got \(String(describing: reader.ending))")
            return
        }
        #expect(bytes > 0)
    }

    @Test("a damaged record is skipped: reading resumes at the next valid record and says what it skipped")
    func damagedRecordIsSkipped() throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let firstLength = Int(bytes[CaptureFileHeader.size]) | Int(bytes[CaptureFileHeader.size + 1]) << 8
        bytes[CaptureFileHeader.size + 12] ^= 0xFF  // inside the first (handshake) record
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try CaptureReader(path: path)
        let records = try reader.readAll()
        #expect(records.count == session.records.count - 1, "every record after the damaged one is read")
        #expect(reader.ending == .clean)
        #expect(reader.damage == [.init(offset: Int64(CaptureFileHeader.size), bytes: 4 + firstLength + 4, reason: "CRC mismatch")])
    }

    @Test("a flipped length byte mid-file costs only that record")
    func damagedLengthMidFile() throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Walk to the third record and break its length.
        var position = CaptureFileHeader.size
        for _ in 0..<2 {
            position += 4 + (Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16) + 4
        }
        bytes[position + 3] = 0x7F
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try CaptureReader(path: path)
        #expect(try reader.readAll().count == session.records.count - 1)
        #expect(reader.damage.count == 1 && reader.damage.first?.offset == Int64(position))
        #expect(reader.ending == .clean)
    }

    @Test("garbage to the end of the file is one damaged range, reported as a corrupt ending")
    func garbageTail() throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let end = bytes.count
        bytes += [UInt8](repeating: 0xEE, count: 300)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try CaptureReader(path: path)
        #expect(try reader.readAll().count == session.records.count)
        #expect(reader.damage == [.init(offset: Int64(end), bytes: 300, reason: "impossible record length 4008636142")])
        #expect(reader.ending == .corrupt(offset: Int64(end), reason: "impossible record length 4008636142"))
    }

    @Test("files that are not captures are refused; the magic tells the kinds apart")
    func detection() throws {
        let path = RecordedSession.temporaryPath(".txt")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("hello, not a capture at all".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CaptureError.self) { try CaptureReader(path: path) }
        #expect(CaptureFileFormat.kind(ofFileAt: path) == .unknown)
        let pcapKind = CaptureFileFormat.kind(ofFileAt: try GoBlipConformanceTests.fixture("goblip-session", "pcap"))
        #expect(pcapKind == .pcapng || pcapKind == .pcap)
        let capture = try RecordedSession.make().writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: capture) }
        #expect(CaptureFileFormat.kind(ofFileAt: capture) == .captureFile)
    }

    @Test("version 1 records are migrated: frames get leg 'both', handshakes their sub-protocol")
    func migrationFromVersion1() throws {
        // Hand-built, as a version 1 writer laid them out.
        var handshakeBody = ByteBuffer()
        handshakeBody.writeVarint(1_800_000_000_000_000_000)
        handshakeBody.writeVarint(5)
        for text in ["127.0.0.1:5000", "GET /db/_blipsync HTTP/1.1"] { handshakeBody.writeText(text) }
        handshakeBody.writeVarint(1)
        handshakeBody.writeText("Host")
        handshakeBody.writeText("127.0.0.1:4984")
        handshakeBody.writeText("ws://127.0.0.1:4985/db/_blipsync")
        handshakeBody.writeVarint(101)
        handshakeBody.writeText("Switching Protocols")
        handshakeBody.writeVarint(1)
        handshakeBody.writeText("Sec-WebSocket-Protocol")
        handshakeBody.writeText("BLIP_3+CBMobile_2")
        var frameBody = ByteBuffer()
        frameBody.writeVarint(1_800_000_000_000_000_001)
        frameBody.writeInteger(UInt8(1))  // server → client
        frameBody.writeVarint(3)
        frameBody.writeBytes([0x01, 0x02, 0x03])

        var file = ByteBuffer()
        CaptureFileHeaderBytes.write(sessionID: 5, to: &file)
        Self.appendRecord(version: 1, kind: 1, body: handshakeBody, to: &file)
        Self.appendRecord(version: 1, kind: 2, body: frameBody, to: &file)
        Self.appendRecord(version: 1, kind: 200, body: ByteBuffer(), to: &file)  // unknown kind: skipped
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(file.readableBytesView).write(to: URL(fileURLWithPath: path))

        let reader = try CaptureReader(path: path)
        let records = try reader.readAll()
        #expect(reader.ending == .clean)
        #expect(reader.migratedRecords == 2)
        #expect(reader.skippedRecords == 1)
        guard records.count == 2, case .handshake(let handshake) = records[0], case .frame(let frame) = records[1] else {
            Issue.record("unexpected records \(records)")
            return
        }
        #expect(handshake.subprotocol == "BLIP_3+CBMobile_2")
        #expect(handshake.sessionID == 5)
        #expect(handshake.requestHeaders["host"] == "127.0.0.1:4984")
        #expect(frame.leg == .both)
        #expect(frame.direction == .serverToClient)
        #expect(Array(frame.bytes.readableBytesView) == [1, 2, 3])
        #expect(frame.time == CaptureTimestamp(seconds: 1_800_000_000, nanoseconds: 1))
    }

    @Test("a record of a future version is refused with a clear error")
    func futureVersion() throws {
        var file = ByteBuffer()
        CaptureFileHeaderBytes.write(sessionID: 1, to: &file)
        Self.appendRecord(version: 9, kind: 7, body: ByteBuffer(bytes: [0, 0]), to: &file)
        let path = RecordedSession.temporaryPath(".blipcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(file.readableBytesView).write(to: URL(fileURLWithPath: path))
        let reader = try CaptureReader(path: path)
        #expect { try reader.next() } throws: { ($0 as? CaptureError)?.code == .unsupportedCaptureVersion }
    }

    // MARK: - Helpers

    static func appendRecord(version: UInt8, kind: UInt8, body: ByteBuffer, to file: inout ByteBuffer) {
        var content = ByteBuffer()
        content.writeInteger(version)
        content.writeInteger(kind)
        content.writeImmutableBuffer(body)
        file.writeInteger(UInt32(content.readableBytes), endianness: .little)
        file.writeImmutableBuffer(content)
        var checksum = RunningChecksum()
        checksum.update(content)
        file.writeInteger(checksum.value, endianness: .little)
    }

    /// A comparable description of a record (ByteBuffers by content).
    static func describe(_ record: CaptureRecord) -> String {
        switch record {
        case .frame(let frame):
            "frame \(frame.time) \(frame.direction) \(frame.leg) \(Array(frame.bytes.readableBytesView))"
        case .messageHead(let head):
            "head \(head.time) \(head.direction) \(head.number) \(head.flags.rawValue) \(head.properties.pairs.map { "\($0.key)=\($0.value)" })"
        default:
            "\(record)"
        }
    }
}

/// The 24-byte header, written independently of the library.
enum CaptureFileHeaderBytes {
    static func write(sessionID: UInt64, to buffer: inout ByteBuffer) {
        buffer.writeBytes([0x89, 0x42, 0x4C, 0x49, 0x50, 0x43, 0x41, 0x50])
        buffer.writeInteger(UInt16(1), endianness: .little)
        buffer.writeInteger(UInt16(0), endianness: .little)
        buffer.writeInteger(UInt32(1), endianness: .little)
        buffer.writeInteger(sessionID, endianness: .little)
    }
}

extension ByteBuffer {
    mutating func writeVarint(_ value: UInt64) { _ = Varint.write(value, to: &self) }
    mutating func writeText(_ text: String) {
        writeVarint(UInt64(text.utf8.count))
        writeString(text)
    }
}
