import BLIPCore
import Testing
@testable import Replication

/// Bad JSON, wrong shapes and absurd sizes become "protocol violation by <side>", never a crash.
@Suite("Malformed messages")
struct MalformedMessageTests {
    static let bodies: [(String, [(String, String)], String)] = [
        ("changes", [], "[[1,\"d\""),
        ("changes", [], "{\"not\":\"an array\"}"),
        ("changes", [], "[[1,2,3]]"),
        ("changes", [], "[[1,\"d\",\"\(revA1)\",false,-5]]"),
        ("changes", [], "[[1,\"d\",\"not-a-rev\"]]"),
        ("proposeChanges", [], "[[\"d\"]]"),
        ("rev", [("id", "d"), ("rev", revA3), ("history", revA1)], "{}"),
        ("rev", [("id", "d"), ("rev", revA1), ("sequence", "not json")], "{}"),
        ("rev", [], "[1,2]"),
        ("setCheckpoint", [("client", "c")], "not json"),
        ("getCollections", [], "{\"collections\":[\"a\"],\"checkpoint_ids\":[]}"),
        ("subChanges", [("batch", "-1"), ("versioning", "lamport")], "[]"),
        ("proveAttachment", [("digest", "sha1-x")], "short"),
        ("getCheckpoint", [], ""),
    ]

    @Test("each is a finding against its sender", arguments: bodies.indices)
    func violation(_ index: Int) {
        let (profile, properties, body) = Self.bodies[index]
        let script = Script()
        let analyzed = script.server(request(profile, 1, properties, body: body))
        #expect(!analyzed.findings.isEmpty, "\(profile) \(body)")
        #expect(analyzed.findings.allSatisfy { $0.side == .serverToClient && $0.kind == .protocolViolation })
        #expect(analyzed.findings.allSatisfy { $0.description.hasPrefix("protocol violation by server: \(profile) #1: ") })
    }

    @Test("a reply of the wrong shape is the replier's violation")
    func badReply() {
        let script = Script()
        script.server(request("changes", 1, body: "[[1,\"d\",\"\(revA1)\"]]"))
        let analyzed = script.client(reply(1, body: "{\"wants\":true}"))
        #expect(analyzed.findings.map(\.description) == ["protocol violation by client: changes #1: changes reply should be a JSON array"])
    }

    @Test("a body over the analysis limit is reported, not parsed")
    func absurdSize() {
        var limits = AnalyzerLimits()
        limits.maxJSONBodyBytes = 1000
        let script = Script(limits: limits)
        let analyzed = script.server(request("changes", 1, body: "[" + String(repeating: "[1,\"d\",\"\(revA1)\"],", count: 100) + "[]]"))
        #expect(analyzed.findings.first?.message.contains("exceeds the 1000-byte analysis limit") == true)
    }

    @Test("garbage bytes and hostile nesting do not crash")
    func garbage() {
        let script = Script()
        var seed: UInt64 = 42
        for number in 1...200 {
            var text = ""
            for _ in 0..<(number % 40) {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                text.append(["[", "]", "{", "}", "\"", ",", ":", "1", "-", "e", "\\", "u", "n", " "][Int(seed >> 60) % 14])
            }
            for profile in ["changes", "proposeChanges", "rev", "setCheckpoint", "getCollections", "subChanges"] {
                script.server(request(profile, MessageNumber(number), [("id", "d"), ("rev", revA1)], body: text), after: 0)
            }
        }
        script.server(request("changes", 999, body: String(repeating: "[", count: 100_000)))
        #expect(script.analyzer.findings.count > 0)
    }
}
