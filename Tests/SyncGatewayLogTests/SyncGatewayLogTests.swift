import Foundation
import Testing
@testable import SyncGatewayLog

/// Sync Gateway 3.2.8's own console output (Fixtures/, from a run of cblite 3.1 pulling through
/// the relay), read and joined with the sessions it belongs to.
@Suite("Sync Gateway's log")
struct SyncGatewayLogTests {
    static func fixture(_ name: String) throws -> String {
        try #require(Bundle.module.path(forResource: name, ofType: nil, inDirectory: "Fixtures"))
    }

    @Test("a handled request's line gives its context, number and profile; other lines theirs")
    func parsesTheFields() throws {
        let request = try #require(SyncGatewayLogLine(
            "2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[684961ef] db:db col:_default #2: Type:getCheckpoint Client:cp-OiSw6WfI2iLkVtmpRlFMOZHAZ9w="))
        #expect(request.level == "INF" && request.key == "SyncMsg" && request.correlationID == "684961ef")
        #expect(request.database == "db" && request.collection == "_default")
        #expect(request.requestNumber == 2 && request.profile == "getCheckpoint")

        let sent = try #require(SyncGatewayLogLine("2026-12-05T12:14:52.595Z [INF] Sync: c:[684961ef] db:db col:_default Sent 3 changes to client, from seq 4"))
        #expect(sent.correlationID == "684961ef" && sent.requestNumber == nil && sent.profile == nil)

        let http = try #require(SyncGatewayLogLine("2026-12-05T12:14:52.411Z [INF] HTTP: c:#005 db:db GET /db/_blipsync (as GUEST)"))
        #expect(http.correlationID == nil && http.key == "HTTP")
        let closed = try #require(SyncGatewayLogLine("2026-12-05T12:14:53.939Z [INF] HTTP: c:[684961ef] db:db #005:    --> BLIP+WebSocket connection closed"))
        #expect(closed.correlationID == "684961ef" && closed.requestNumber == nil, "an HTTP request's count, not a BLIP request's")

        let warning = try #require(SyncGatewayLogLine("2026-12-05T12:14:52.411Z [WRN] c:[684961ef] db:db col:_default something -- rest.foo() at x.go:1"))
        #expect(warning.key == nil && warning.correlationID == "684961ef" && warning.level == "WRN")

        #expect(SyncGatewayLogLine("    at some continuation") == nil)
        #expect(SyncGatewayLogLine("") == nil)
    }

    @Test("only the wanted replications' lines are kept, from plain and gzip files alike")
    func readsPlainAndRotatedFiles() throws {
        let plain = try SyncGatewayLog(reading: [Self.fixture("sg-3.2.8-console.log")], correlationIDs: ["684961ef"])
        #expect(plain.lines.keys.sorted() == ["684961ef"])
        #expect(plain.lines["684961ef"]?.count == 8)
        let rotated = try SyncGatewayLog(reading: [Self.fixture("sg_info-2026-12-05T12-15-00.000.log.gz")],
                                         correlationIDs: ["684961ef", "297c2738"])
        #expect(rotated.lines["684961ef"] == plain.lines["684961ef"].map { lines in lines })
        #expect(rotated.lines["297c2738"]?.count == 8)
    }

    @Test("a missing file, a broken gzip file and an oversized file are errors that name the file and the cause")
    func unreadableFiles() throws {
        #expect(throws: SyncGatewayLogError(path: "/nonexistent/sg.log", reason: "no such file")) {
            try SyncGatewayLog(reading: ["/nonexistent/sg.log"], correlationIDs: [])
        }
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID()).log.gz").path
        _ = FileManager.default.createFile(atPath: broken, contents: Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff]))
        defer { try? FileManager.default.removeItem(atPath: broken) }
        #expect { try SyncGatewayLog(reading: [broken], correlationIDs: []) } throws: { error in
            (error as? SyncGatewayLogError)?.description.contains("not a readable gzip file") == true
        }
        var limits = SyncGatewayLogLimits()
        limits.maxFileBytes = 100
        #expect { try SyncGatewayLog(reading: [Self.fixture("sg-3.2.8-console.log")], correlationIDs: [], limits: limits) } throws: { error in
            (error as? SyncGatewayLogError)?.reason == "larger than 100 bytes"
        }
    }

    @Test("lines past the per-session limit are counted, not kept")
    func perSessionLimit() throws {
        var limits = SyncGatewayLogLimits()
        limits.maxLinesPerSession = 3
        let log = try SyncGatewayLog(reading: [Self.fixture("sg-3.2.8-console.log")], correlationIDs: ["684961ef"], limits: limits)
        #expect(log.lines["684961ef"]?.count == 3 && log.dropped["684961ef"] == 5)
    }

    /// SG handled the subChanges (BLIP #2) first and numbered it #1: the profile decides.
    @Test("SG's lines go with the client's requests by profile and order, even when SG numbered them otherwise")
    func joinsByProfile() throws {
        let log = try SyncGatewayLog(reading: [Self.fixture("sg-3.2.8-console.log")], correlationIDs: ["684961ef"])
        let join = SessionLogJoin(lines: log.lines["684961ef"] ?? [],
                                  requests: [(1, "getCheckpoint"), (2, "subChanges"), (3, "setCheckpoint")])
        #expect(join.joined.byRequest[1]?.map(\.profile) == ["getCheckpoint"])
        #expect(join.joined.byRequest[2]?.map(\.profile) == ["subChanges"])
        #expect(join.joined.byRequest[2]?.first?.requestNumber == 1, "SG's own count differs from the BLIP number")
        #expect(join.joined.byRequest[3]?.map(\.profile) == ["setCheckpoint"])
        #expect(join.joined.session.map { String($0.text.suffix(30)) }.last?.contains("connection closed") == true)
        #expect(join.joined.session.count == 5)
    }
}
