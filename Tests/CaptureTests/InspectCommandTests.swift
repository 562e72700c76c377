import BLIPTestSupport
import Capture
import Foundation
import Testing

/// `blipscope inspect` as a user runs it: the built executable on the go-blip capture.
@Suite("blipscope inspect, end to end")
struct InspectCommandTests {
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let fixture = try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
        let result = try await BlipscopeExecutable.run(["inspect", fixture] + arguments)
        return (result.status, result.output)
    }

    static func jsonLines(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("--json: one record per message with the documented fields, replies read in replication terms")
    func jsonMessages() async throws {
        let (status, output) = try await Self.run(["--json"])
        #expect(status == 0)
        let all = try Self.jsonLines(output)
        #expect(all.filter { $0["type"] as? String == "CLOSE" }.map { $0["code"] as? Int } == [1000, 1000])
        let records = all.filter { ["MSG", "RPY", "ERR"].contains($0["type"] as? String) }
        #expect(records.count == 48)
        for key in ["conn", "from", "type", "number", "compressed", "urgent", "noReply", "properties", "bodySize", "bodySha1", "frames"] {
            #expect(records.allSatisfy { $0[key] != nil }, "every record has \(key)")
        }
        let changesReply = try #require(records.first { $0["type"] as? String == "RPY" && ($0["summary"] as? String)?.hasPrefix("changes") == true })
        #expect((changesReply["summary"] as? String)?.contains("→ wants") == true)
    }

    @Test("--frames: each frame of a message that took several, then the message; their sizes add up to its own")
    func framesOfMultiFrameMessages() async throws {
        let (status, output) = try await Self.run(["--json", "--frames"])
        #expect(status == 0)
        let all = try Self.jsonLines(output)
        let frames = all.filter { $0["type"] as? String == "FRAME" }
        let multi = all.filter { ["MSG", "RPY", "ERR"].contains($0["type"] as? String) && ($0["frames"] as? Int ?? 1) > 1 }
        #expect(!multi.isEmpty, "the capture has messages of several frames")
        for message in multi {
            let own = frames.filter { $0["from"] as? String == message["from"] as? String
                && $0["number"] as? Int == message["number"] as? Int
                && $0["messageType"] as? String == message["type"] as? String }
            #expect(own.count == (message["frames"] as? Int ?? 0) - 1, "every frame but the last, which the message's line describes")
        }
        let plain = try await Self.jsonLines(Self.run(["--json"]).output)
        #expect(plain.count + frames.count == all.count, "without --frames, no frame lines")
        let text = try await Self.run(["--frames"]).output
        #expect(text.contains("frame of MSG#"))
    }

    @Test("--profile, --doc, --summary and --stuck")
    func analyzerViews() async throws {
        let revs = try await Self.jsonLines(Self.run(["--json", "--profile", "rev"]).output)
        #expect(revs.count == 10, "5 rev requests and their 5 replies")

        let timeline = try await Self.jsonLines(Self.run(["--json", "--doc", "doc-0004"]).output)
        #expect(timeline.map { $0["event"] as? String } == ["offered", "wanted", "revSent", "revAccepted"])
        #expect(timeline.allSatisfy { $0["conn"] != nil && $0["from"] != nil && $0["profile"] != nil && $0["summary"] != nil })

        let summaries = try await Self.jsonLines(Self.run(["--json", "--summary"]).output)
        let summary = try #require(summaries.first)
        let pulled = try #require(summary["pulled"] as? [String: Any])
        #expect(pulled["documents"] as? Int == 5)
        #expect(summary["caughtUp"] as? Bool == true)

        let (status, stuck) = try await Self.run(["--stuck"])
        #expect(status == 0)
        #expect(stuck.contains("0 findings"))
    }

    @Test("a file that is not a capture gives a clear error and a failing status")
    func notACapture() async throws {
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-capture-\(UUID()).pcap")
        try Data("hello".utf8).write(to: junk)
        defer { try? FileManager.default.removeItem(at: junk) }
        let result = try await BlipscopeExecutable.run(["inspect", junk.path])
        #expect(result.status != 0)
        #expect(result.errors.contains("cannot read"), "\(result.errors)")
    }

    /// One flipped byte mid-file costs one record: inspect reads on, says how many bytes it
    /// skipped and counts the damage among the problems.
    @Test func aDamagedRecordIsSkippedAndReported() async throws {
        let session = try RecordedSession.make()
        let path = try session.writeCaptureFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var position = CaptureFileHeader.size
        for _ in 0..<3 {
            let length = Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16
            position += 4 + length + 4
        }
        bytes[position + 8] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try await BlipscopeExecutable.run(["inspect", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("skipped ") && result.output.contains("damaged bytes at byte \(position)"), "\(result.output)")
        // The lost record was a frame, so the frames after it no longer decode either: more problems follow.
        let problems = result.output.firstMatch(of: /, (\d+) problems,/).flatMap { Int($0.1) } ?? 0
        #expect(problems >= 1, "\(result.output)")
    }
}
