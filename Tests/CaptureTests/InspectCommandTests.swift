import Foundation
import Testing

/// `blipscope inspect` as a user runs it: the built executable on the go-blip capture.
@Suite("blipscope inspect, end to end")
struct InspectCommandTests {
    /// The executable built next to the tests (`swift build --build-tests` builds it too).
    static var executable: URL? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/blipscope")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try #require(executable, "build the blipscope executable first")
        let fixture = try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
        process.arguments = ["inspect", fixture] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func jsonLines(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("--json: one record per message with the documented fields, replies read in replication terms",
          .enabled(if: executable != nil))
    func jsonMessages() throws {
        let (status, output) = try Self.run(["--json"])
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

    @Test("--profile, --doc, --summary and --stuck", .enabled(if: executable != nil))
    func analyzerViews() throws {
        let revs = try Self.jsonLines(Self.run(["--json", "--profile", "rev"]).output)
        #expect(revs.count == 10, "5 rev requests and their 5 replies")

        let timeline = try Self.jsonLines(Self.run(["--json", "--doc", "doc-0004"]).output)
        #expect(timeline.map { $0["event"] as? String } == ["offered", "wanted", "revSent", "revAccepted"])
        #expect(timeline.allSatisfy { $0["conn"] != nil && $0["from"] != nil && $0["profile"] != nil && $0["summary"] != nil })

        let summary = try #require(Self.jsonLines(Self.run(["--json", "--summary"]).output).first)
        let pulled = try #require(summary["pulled"] as? [String: Any])
        #expect(pulled["documents"] as? Int == 5)
        #expect(summary["caughtUp"] as? Bool == true)

        let (status, stuck) = try Self.run(["--stuck"])
        #expect(status == 0)
        #expect(stuck.contains("0 findings"))
    }

    @Test("a file that is not a capture gives a clear error and a failing status", .enabled(if: executable != nil))
    func notACapture() throws {
        let process = Process()
        process.executableURL = Self.executable
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-capture-\(UUID()).pcap")
        try Data("hello".utf8).write(to: junk)
        defer { try? FileManager.default.removeItem(at: junk) }
        process.arguments = ["inspect", junk.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(text.contains("cannot read"))
    }
}
