import BLIPCore
import NIOCore
import Replay
import Replication
import Testing

/// What the report says about a recorded reply and its new counterpart.
@Suite struct ReplyComparatorTests {
    static func scripted(_ profile: String, reply: BLIPMessage?) -> ScriptedRequest {
        var request = BLIPMessage.request(profile: profile)
        request.number = 4
        return ScriptedRequest(index: 2, request: request, sentAt: 0, recordedReply: reply, repliedAt: 0,
                               awaitsReplies: [], awaitsPeerRequests: 0)
    }

    static func reply(_ body: String, properties: Properties = [:]) -> BLIPMessage {
        BLIPMessage(type: .response, number: 4, properties: properties, body: ByteBuffer(string: body))
    }

    @Test func jsonBodiesDifferByPath() {
        let changes = JSONDiff.changes(
            from: JSONValue(parsing: ByteBuffer(string: #"{"local":3,"remote":"7","keep":[1,[2,3]]}"#))!,
            to: JSONValue(parsing: ByteBuffer(string: #"{"local":3,"remote":"9","keep":[1,[2]],"new":null}"#))!,
            root: "body")
        #expect(changes == [
            .init(path: "body.keep[1][1]", old: "3", new: nil),
            .init(path: "body.new", old: nil, new: "null"),
            .init(path: "body.remote", old: "\"7\"", new: "\"9\""),
        ])
    }

    @Test func checkpointSequencesAndRevAreAllowedByDefault() throws {
        let comparator = ReplyComparator(allowances: try ReplayAllowances(ReplayAllowances.defaults))
        let recorded = Self.reply(#"{"local":3,"remote":12}"#, properties: ["rev": "0-2"])
        let new = Self.reply(#"{"local":3,"remote":40}"#, properties: ["rev": "0-5"])
        let entry = comparator.entry(for: Self.scripted("getCheckpoint", reply: recorded), newReply: new, sent: true)
        #expect(entry.differences.map(\.path) == ["properties.rev", "body.remote"])
        #expect(entry.differences.map(\.allowedBy) == ["checkpoint-rev", "sequences"])
        #expect(entry.disallowed == 0)
        // The same paths in a reply of another profile are not covered.
        let other = comparator.entry(for: Self.scripted("getAttachment", reply: recorded), newReply: new, sent: true)
        #expect(other.disallowed == 2)
        #expect(other.differences.first { $0.path == "properties.rev" }?.allowedBy == nil)
    }

    @Test func statusAndErrorCodeDifferencesCount() throws {
        let comparator = ReplyComparator(allowances: try ReplayAllowances([]))
        let recorded = Self.reply("[[],[\"1-a\"]]")
        let error = BLIPMessage.error(to: 4, domain: "HTTP", code: 409, message: "conflict")
        let entry = comparator.entry(for: Self.scripted("changes", reply: recorded), newReply: error, sent: true)
        #expect(entry.recordedStatus == "RPY")
        #expect(entry.newStatus == "ERR HTTP/409")
        #expect(entry.differences.map(\.path) == ["type", "error.domain", "error.code", "body"])
        #expect(entry.differences.first?.old == "RPY" && entry.differences.first?.new == "ERR")
        #expect(entry.differences.last?.new == "conflict")
        let missing = comparator.entry(for: Self.scripted("changes", reply: recorded), newReply: nil, sent: true)
        #expect(missing.newStatus == "none")
        #expect(missing.differences.map(\.path) == ["reply"])
        #expect(missing.disallowed == 1)
    }

    @Test func patternsAndNamesSelectWhatMayDiffer() throws {
        let allowances = try ReplayAllowances(["revs", "echo:body.**", "properties.X-*"])
        #expect(allowances.allowance(profile: "changes", path: "body[3][0]") == "revs")
        #expect(allowances.allowance(profile: "changes", path: "body[3]") == "revs")
        #expect(allowances.allowance(profile: "rev", path: "properties.rev") == "revs")
        #expect(allowances.allowance(profile: "echo", path: "body.a[2].b") == "echo:body.**")
        #expect(allowances.allowance(profile: "echo", path: "body") == nil)
        #expect(allowances.allowance(profile: "subChanges", path: "properties.X-Trace") == "properties.X-*")
        #expect(allowances.allowance(profile: "subChanges", path: "properties.X-Trace.more") == nil)
        #expect(allowances.allowance(profile: "changes", path: "type") == nil)
        #expect(throws: ReplayError.self) { try ReplayAllowances(["everything"]) }
    }

    @Test func reportCountsUnmatchedPeerRequestsAndEarlyEnds() {
        var report = ReplayReport(side: .client, session: 0, timing: "deps", requestsScripted: 1, peerRequestsRecorded: 1)
        #expect(report.matches)
        report.peerRequestNotes = [.init(profile: "rev", number: 3, outcome: "reused", allowedBy: nil)]
        #expect(report.matches)
        report.peerRequestNotes.append(.init(profile: "getRev", number: 4, outcome: "unmatched", allowedBy: nil))
        #expect(!report.matches)
        report.peerRequestNotes[1].allowedBy = "unmatched"
        #expect(report.matches)
        report.endedEarly = "stalled"
        #expect(!report.matches)
        #expect(report.textLines().last?.hasPrefix("DIFFERENT: client role") == true)
        #expect(report.jsonText().contains("\"matches\":false"))
    }
}
