import Foundation
import Testing
@testable import SyncGatewayLog

/// A live session joined with Sync Gateway's log as both are written: requests given as the
/// client sends them, SG's lines as the relay reads them from a log file SG keeps writing.
@Suite("Sync Gateway's log, followed live")
struct FollowingALiveLogTests {
    static func line(_ text: String) -> SyncGatewayLogLine { SyncGatewayLogLine(Substring(text))! }

    @Test("each handled request's line joins the request as it arrives; its result line follows it; the rest is the session's")
    func joinsIncrementally() {
        var join = SessionLogJoin()
        join.request(number: 1, profile: "getCheckpoint")
        #expect(join.add(Self.line("2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db col:_default #1: Type:getCheckpoint Client:cp-x")) == .request(1))
        join.request(number: 2, profile: "subChanges")
        join.request(number: 3, profile: "getAttachment")
        #expect(join.add(Self.line("2026-12-05T12:14:52.416Z [INF] SyncMsg: c:[a1] db:db col:_default #2: Type:subChanges Since:0")) == .request(2))
        #expect(join.add(Self.line("2026-12-05T12:14:52.500Z [INF] Sync: c:[a1] db:db col:_default Sent 3 changes to client, from seq 4")) == .session)
        #expect(join.add(Self.line("2026-12-05T12:14:52.600Z [INF] SyncMsg: c:[a1] db:db col:_default #3: Type:getAttachment Digest:sha1-x")) == .request(3))
        #expect(join.add(Self.line("2026-12-05T12:14:52.601Z [INF] SyncMsg: c:[a1] db:db col:_default #3: Type:getAttachment   --> 403 Attachment's doc not being synced Time:1ms")) == .request(3),
                "SG's result line for #3 goes with the same request")
    }

    /// The relay forwards first and records after: SG's line may be read before the request.
    @Test("a line about a request not recorded yet is held and placed when the request is; its result line with it")
    func heldUntilTheRequestIsRecorded() {
        var join = SessionLogJoin(maxHeld: 2)
        #expect(join.add(Self.line("2026-12-05T12:14:52.700Z [INF] SyncMsg: c:[a1] db:db #1: Type:setCheckpoint Client:cp-x"), tag: 7) == .held)
        #expect(join.add(Self.line("2026-12-05T12:14:52.701Z [INF] SyncMsg: c:[a1] db:db #1: Type:setCheckpoint --> 409 conflict"), tag: 8) == .held)
        #expect(join.add(Self.line("2026-12-05T12:14:52.702Z [INF] SyncMsg: c:[a1] db:db #2: Type:rev Id:d"), tag: 9) == .session,
                "no more than maxHeld wait")
        #expect(join.request(number: 5, profile: "getCheckpoint").isEmpty)
        let placed = join.request(number: 6, profile: "setCheckpoint")
        #expect(placed.map(\.tag) == [7, 8] && placed.allSatisfy { $0.number == 6 })
        #expect(join.add(Self.line("2026-12-05T12:14:52.703Z [INF] SyncMsg: c:[a1] db:db #3: Type:getCheckpoint Client:cp-x")) == .request(5))
    }

    @Test("requests SG's log never names (a log below the level that names them) wait only up to the bound, the oldest given up")
    func waitingIsBounded() {
        var join = SessionLogJoin(maxWaiting: 3)
        for number in 1...5 { join.request(number: UInt64(number), profile: "rev") }
        join.request(number: 6, profile: "getCheckpoint")
        // Waiting now: rev 4, rev 5, getCheckpoint 6 (revs 1–3 given up).
        #expect(join.add(Self.line("2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[a1] db:db #1: Type:rev Id:d")) == .request(4))
        #expect(join.add(Self.line("2026-12-05T12:14:52.416Z [INF] SyncMsg: c:[a1] db:db #2: Type:getCheckpoint Client:cp")) == .request(6))
    }

    @Test("bytes cut anywhere make the same lines; CRLF ends a line; a line over the limit is cut and its rest skipped")
    func splitsLines() {
        var splitter = LogLineSplitter(maxLineBytes: 8)
        var lines: [String] = []
        for chunk in ["ab", "c\nde", "f\r\n", "0123456789abc", "def\nlast"] { lines += splitter.lines(Array(chunk.utf8)) }
        #expect(lines == ["abc", "def", "01234567"])
        #expect(splitter.lines(Array("\n".utf8)) == ["last"])
    }

    @Test("a followed file: what was there before is skipped, appended lines are read once, a rotated or cut file is read from its start")
    func followsAFileAsTailDoes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sgtail-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sg_info.log").path
        try "before the relay started\n".write(toFile: path, atomically: false, encoding: .utf8)
        let tail = SyncGatewayLogTail(path: path)
        #expect(tail.read().isEmpty)

        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("one\ntw".utf8))
        #expect(tail.read() == ["one"])
        handle.write(Data("o\n".utf8))
        #expect(tail.read() == ["two"])
        #expect(tail.read().isEmpty)

        // Rotated: the file moved away and a new one made in its place.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        try "three\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(tail.read() == ["three"])

        // Cut (copytruncate): shorter than what was read.
        let again = try #require(FileHandle(forWritingAtPath: path))
        again.truncateFile(atOffset: 0)
        again.write(Data("4\n".utf8))
        #expect(tail.read() == ["4"])
        try handle.close()
        try again.close()
    }

    @Test("a file that appears after the relay started is read from its start")
    func aLaterFileFromItsStart() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sgtail-\(UUID()).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tail = SyncGatewayLogTail(path: path)
        #expect(tail.read().isEmpty)
        try "first\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(tail.read() == ["first"])
    }
}
