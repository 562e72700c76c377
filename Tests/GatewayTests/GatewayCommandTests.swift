import BLIPTestSupport
import Foundation
import Testing

/// `blipscope gateway`, `replicate` and `demo` as a user runs them: the built executable, on
/// loopback with ports the system picks.
@Suite("blipscope gateway, replicate and demo, end to end")
struct GatewayCommandTests {
    /// The sample documents as the file has them.
    static func sampleDocuments() throws -> [[String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: BlipscopeExecutable.sampleDocumentsPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["docs"] as? [[String: Any]])
    }

    static func temporaryFile(_ json: Any) throws -> String {
        let path = NSTemporaryDirectory() + "blipscope-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("gateway --load serves the sample documents; replicate pulls all of them, or the ones asked for")
    func gatewayServesAPull() async throws {
        let docs = try Self.sampleDocuments()
        let withAttachments = docs.filter { $0["_attachments"] != nil }.count
        #expect(docs.count >= 10 && withAttachments > 0, "the sample has documents and attachments to pull")
        let (gateway, port) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath])
        defer { gateway.kill() }
        #expect(gateway.errors.text.contains("databases db (\(docs.count) docs)"))
        let url = "ws://127.0.0.1:\(port)/db"

        let all = try await BlipscopeExecutable.replicate(url)
        #expect(all.status == 0, "\(all.errors)")
        let result = try #require(all.result)
        #expect(result["pulledRevisions"] as? Int == docs.count)
        #expect(result["pulledAttachments"] as? Int == withAttachments)
        #expect(result["localDocuments"] as? Int == docs.count)
        #expect(result["subprotocol"] as? String == "BLIP_3+CBMobile_3")
        #expect((result["conflicts"] as? [Any])?.isEmpty == true && (result["documentErrors"] as? [Any])?.isEmpty == true)

        let chosen = try #require(docs.compactMap { $0["_id"] as? String }.first)
        let one = try await BlipscopeExecutable.replicate(url, ["--pull", "--doc-id", chosen])
        #expect(one.result?["pulledRevisions"] as? Int == 1)
        #expect(one.result?["localDocuments"] as? Int == 1)

        // The text report says the same for people.
        let text = try await BlipscopeExecutable.run(["replicate", url, "--pull"])
        #expect(text.status == 0)
        #expect(text.output.contains("pulled     \(docs.count) revisions, \(withAttachments) attachments"), "\(text.output)")
        #expect(try await gateway.stop() == 0)
    }

    @Test("replicate --push --load puts local documents into the gateway; a later pull brings them back")
    func pushThenPull() async throws {
        let seed = try Self.temporaryFile(["docs": [["_id": "pushed-1", "n": 1], ["_id": "pushed-2", "n": 2]]])
        defer { try? FileManager.default.removeItem(atPath: seed) }
        let (gateway, port) = try await BlipscopeExecutable.startGateway()
        defer { gateway.kill() }
        let url = "ws://127.0.0.1:\(port)/db"
        let push = try await BlipscopeExecutable.replicate(url, ["--push", "--load", seed])
        #expect(push.status == 0, "\(push.errors)")
        #expect(push.result?["pushedRevisions"] as? Int == 2)
        let pull = try await BlipscopeExecutable.replicate(url)
        #expect(pull.result?["pulledRevisions"] as? Int == 2)
        #expect(try await gateway.stop() == 0)
    }

    @Test("gateway --users: a replicator without credentials is refused, with them it pulls")
    func basicAuth() async throws {
        let users = try Self.temporaryFile(["users": ["alice": ["password": "wonderland"]]])
        defer { try? FileManager.default.removeItem(atPath: users) }
        let (gateway, port) = try await BlipscopeExecutable.startGateway(["--load", BlipscopeExecutable.sampleDocumentsPath,
                                                                         "--users", users])
        defer { gateway.kill() }
        let url = "ws://127.0.0.1:\(port)/db"
        let anonymous = try await BlipscopeExecutable.replicate(url)
        #expect(anonymous.status != 0)
        #expect(anonymous.result == nil)
        let wrong = try await BlipscopeExecutable.replicate(url, ["--pull", "--user", "alice", "--password", "guess"])
        #expect(wrong.status != 0)
        let alice = try await BlipscopeExecutable.replicate(url, ["--pull", "--user", "alice", "--password", "wonderland"])
        #expect(alice.status == 0, "\(alice.errors)")
        #expect(alice.result?["pulledRevisions"] as? Int == (try Self.sampleDocuments()).count)
        #expect(try await gateway.stop() == 0)
    }

    @Test("demo runs to completion: a summary that adds up, a log line per decoded message, capture files inspect reads")
    func demo() async throws {
        let docs = try Self.sampleDocuments()
        let directory = NSTemporaryDirectory() + "blipscope-demo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let demo = try await BlipscopeExecutable.run(["demo", "--docs", BlipscopeExecutable.sampleDocumentsPath,
                                                      "--capture", directory, "--timeout", "60"], within: 90)
        #expect(demo.status == 0, "\(demo.errors)")
        let lines = demo.output.split(separator: "\n").map(String.init)
        let summary = try #require(lines.firstIndex(of: "── summary"), "\(demo.output.suffix(2000))")
        let report = Array(lines[summary...])
        #expect(report.contains { $0.hasPrefix("  pulled     \(docs.count) of \(docs.count) documents") && $0.hasSuffix("byte-equal with the gateway") })
        #expect(report.contains { $0.hasPrefix("  pushed     3 revisions (new demo_note with hello.txt, changed ") })
        #expect(report.contains { $0.hasPrefix("  conflicts  1: push conflict on ") })

        // "relay  2 sessions, N messages decoded (C C→U, U U→C)": N is the log's message lines.
        let relayLine = try #require(report.first { $0.hasPrefix("  relay      ") })
        let numbers = relayLine.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count >= 4)
        let (sessions, decoded, toUpstream, toClient) = (numbers[0], numbers[1], numbers[2], numbers[3])
        #expect(sessions == 2)
        #expect(decoded == toUpstream + toClient)
        let log = lines[..<summary]
        #expect(log.filter { $0.contains(" dir=C→U type=") && !$0.contains("type=ACK") }.count == toUpstream)
        #expect(log.filter { $0.contains(" dir=U→C type=") && !$0.contains("type=ACK") }.count == toClient)
        #expect(log.filter { $0.contains("event=open") }.count == 2)

        // The capture files it names exist, and inspect reads the pull back out of the first.
        let captureLine = try #require(report.first { $0.hasPrefix("  capture    ") })
        let files = captureLine.dropFirst("  capture    ".count).components(separatedBy: ", ")
        #expect(files.count == 2)
        #expect(Set(files) == Set(try FileManager.default.contentsOfDirectory(atPath: directory).map { "\(directory)/\($0)" }))
        let inspected = try await BlipscopeExecutable.run(["inspect", files[0], "--json", "--summary"])
        let first = try #require(inspected.output.split(separator: "\n").first, "\(inspected.errors)")
        let pull = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect((pull["pulled"] as? [String: Any])?["documents"] as? Int == docs.count)
    }
}
