import BLIPCore
import Foundation
import Testing
@testable import WebView

/// Findings link to the messages they cite; a document's timeline spans sessions.
@Suite("Findings and documents")
struct FindingsAndDocumentsTests {
    @Test("a checkpoint 409 loop is a finding that links to a setCheckpoint")
    func checkpointLoop() throws {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        script.server(reply(1, [("rev", "5-x")], body: #"{"remote":10}"#))
        for number in MessageNumber(2)...4 {
            script.client(request("setCheckpoint", number, [("client", "cp"), ("rev", "4-old")], body: #"{"remote":20}"#))
            script.server(errorReply(number, code: 409, message: "Document update conflict"))
        }
        let json = try object(WebJSON.findings(script.recording, now: 300))
        let findings = try #require(json["findings"] as? [[String: Any]])
        let loop = try #require(findings.first { ($0["finding"] as? [String: Any])?["kind"] as? String == "checkpointConflictLoop" })
        let seq = try #require(loop["seq"] as? Int)
        let cited = try #require(script.recording.record(seq: seq))
        #expect(cited.profile == "setCheckpoint")
        let session = try #require((try object(WebJSON.sessions(script.history, now: 300))["sessions"] as? [[String: Any]])?.first)
        let badge = try #require(session["findings"] as? [String: Any])
        #expect((badge["kinds"] as? [String])?.contains("checkpointConflictLoop") == true)
        #expect(try seqsWithErrors(script) == [3, 5, 7])
    }

    func seqsWithErrors(_ script: SessionScript) throws -> [Int] {
        let page = try object(WebJSON.messages(script.recording, filter: MessageFilter(query: ["type": "ERR"]), from: 0, limit: 10))
        return try #require(page["rows"] as? [[String: Any]]).compactMap { $0["i"] as? Int }
    }

    @Test("a document's timeline across two sessions, each event with its message")
    func timeline() throws {
        let history = SessionHistory()
        let first = SessionScript(id: 1, history: history)
        first.server(request("changes", 1, body: #"[[1,"doc-7","\#(revA1)"]]"#))
        first.client(reply(1, body: "[[]]"))
        first.server(request("rev", 2, [("id", "doc-7"), ("rev", revA1)], body: #"{"v":1}"#))
        first.client(reply(2))
        first.close()
        let second = SessionScript(id: 2, history: history)
        second.client(request("proposeChanges", 1, body: #"[["doc-7","\#(revA2)","\#(revA1)"]]"#))
        second.server(reply(1, body: "[]"))

        let json = try object(WebJSON.document("doc-7", history: history))
        let events = try #require(json["events"] as? [[String: Any]])
        let kinds = events.compactMap { ($0["event"] as? [String: Any])?["event"] as? String }
        #expect(kinds == ["offered", "wanted", "revSent", "revAccepted", "proposed", "wanted"])
        #expect(events.map { $0["session"] as? Int } == [1, 1, 1, 1, 2, 2])
        #expect(events.map { $0["seq"] as? Int } == [0, 1, 2, 3, 0, 1])
        #expect(try object(WebJSON.document("nothing", history: history))["events"] as? [Any] != nil)
    }
}
