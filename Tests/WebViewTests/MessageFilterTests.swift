import BLIPCore
import Foundation
import Testing
@testable import WebView

/// The filters of a session's message page, each narrowing a small push.
@Suite("Message filters")
struct MessageFilterTests {
    /// A push with a conflict: proposeChanges, its reply, a rev refused with 409, a token property.
    func push() -> SessionScript {
        let script = SessionScript()
        script.client(request("getCheckpoint", 1, [("client", "cp"), ("auth_token", "tok-9f8e")]))
        script.server(errorReply(1, code: 404, message: "missing"))
        script.client(request("proposeChanges", 2, body: #"[["doc-a","\#(revA1)"],["doc-b","\#(revA1)"]]"#))
        script.server(reply(2, body: "[]"))
        script.client(request("rev", 3, [("id", "doc-a"), ("rev", revA1)], body: #"{"x":1}"#))
        script.server(errorReply(3, code: 409, message: "conflict"))
        return script
    }

    func seqs(_ script: SessionScript, _ query: [String: String]) throws -> [Int] {
        let page = try object(WebJSON.messages(script.recording, filter: MessageFilter(query: query), from: 0, limit: 100))
        return try #require(page["rows"] as? [[String: Any]]).compactMap { $0["i"] as? Int }
    }

    @Test("by profile, direction, type, error, document")
    func fields() throws {
        let script = push()
        #expect(try seqs(script, ["profile": "rev"]) == [4, 5])
        #expect(try seqs(script, ["dir": "s2c"]) == [1, 3, 5])
        #expect(try seqs(script, ["type": "ERR"]) == [1, 5])
        #expect(try seqs(script, ["error": "1"]) == [1, 5])
        #expect(try seqs(script, ["doc": "doc-b"]) == [2, 3])
        #expect(try seqs(script, ["doc": "doc-a", "dir": "c2s"]) == [2, 4])
        #expect(try seqs(script, [:]) == [0, 1, 2, 3, 4, 5])
    }

    @Test("free text finds summaries and properties, never a secret's value")
    func text() throws {
        let script = push()
        #expect(try seqs(script, ["q": "PROPOSECHANGES"]) == [2, 3])
        #expect(try seqs(script, ["q": "client"]) == [0, 1])
        #expect(try seqs(script, ["q": "tok-9f8e"]).isEmpty)
        #expect(try seqs(script, ["q": "auth_token"]) == [0])
    }

    @Test("query text is decoded as a form's")
    func query() {
        let request = WebRequest(target: "/api/sessions/3/messages?q=doc%2F1+x&after=7&doc=a%20b&bad=%zz")
        #expect(request.path == "/api/sessions/3/messages")
        #expect(request.query == ["q": "doc/1 x", "after": "7", "doc": "a b", "bad": "%zz"])
        #expect(request.int("after", default: 0, in: 0...5) == 5)
        #expect(MessageFilter(query: ["dir": "c2s", "type": "rpy"]).type == .response)
    }

    @Test("a changes batch naming more documents than a row carries says so, and the server's doc= filter finds every one")
    func documentBeyondTheRow() throws {
        let script = SessionScript()
        let entries = (1...20).map { #"[\#($0),"doc-\#($0)","1-\#(String(repeating: "a", count: 32))"]"# }
        script.server(request("changes", 1, body: "[" + entries.joined(separator: ",") + "]"))
        script.client(reply(1, body: "[]"))
        let page = try object(WebJSON.messages(script.recording, filter: MessageFilter(), from: 0, limit: 10))
        let rows = try #require(page["rows"] as? [[String: Any]])
        #expect((rows[0]["docs"] as? [String])?.count == WebJSON.rowDocuments && rows[0]["dx"] as? Bool == true)
        #expect(rows[1]["dx"] as? Bool == true, "its reply names the same documents")
        #expect(try seqs(script, ["doc": "doc-20"]) == [0, 1], "the 20th document of the batch")
        #expect(try seqs(script, ["doc": "doc-2"]) == [0, 1] && seqs(script, ["doc": "doc-21"]).isEmpty)
    }
}
