import BLIPCore
import Mediation
import NIOCore
import Testing

/// The filterChanges transform: entries removed by document ID, and the receiver's reply mapped
/// back to the positions of the original list (replication protocol, seeds/000: changes and
/// proposeChanges replies; wire-format §4.4 for the numbers around it).
@Suite("Changes filter")
struct ChangesFilterTests {
    static let changes = #"[[1,"a","1-a"],[2,"b","1-b"],[3,"c\u0022q","1-c",true],[4,"d","2-d",false,120]]"#
    static let proposals = #"[["a","2-a","1-a"],["b","1-b"],["c","3-c","2-c",88]]"#

    @Test("a changes list keeps its entries byte for byte; the reply gets 0 for removed entries")
    func changesReplyMapping() throws {
        let outcome = try ChangesFilter(kind: .changes).filter(ByteBuffer(string: Self.changes)) { $0 != "b" && $0 != "d" }
        guard case .filtered(let body, let rewrite, let kept, let count) = outcome else {
            Issue.record("expected a filtered list, got \(outcome)")
            return
        }
        #expect(String(buffer: body) == #"[[1,"a","1-a"],[3,"c\u0022q","1-c",true]]"#)
        #expect(kept == [0, 2] && count == 4)
        // The receiver wants a (no known ancestors) and c (knows 1-x).
        #expect(String(buffer: try rewrite.rewriteBody(ByteBuffer(string: #"[[], ["1-x"]]"#))) == #"[[],0,["1-x"]]"#)
        // A short reply: trailing not-wanted items omitted.
        #expect(String(buffer: try rewrite.rewriteBody(ByteBuffer(string: "[[]]"))) == "[[]]")
        #expect(String(buffer: try rewrite.rewriteBody(ByteBuffer(string: "[]"))) == "[]")
        #expect(throws: ChangesFilterError.self) { try rewrite.rewriteBody(ByteBuffer(string: "[0,0,0]")) }
    }

    @Test("a proposeChanges reply answers removed entries 304 and fills omitted trailing zeros")
    func proposeChangesReplyMapping() throws {
        let outcome = try ChangesFilter(kind: .proposeChanges).filter(ByteBuffer(string: Self.proposals)) { $0 != "b" }
        guard case .filtered(let body, let rewrite, _, _) = outcome else {
            Issue.record("expected a filtered list")
            return
        }
        #expect(String(buffer: body) == #"[["a","2-a","1-a"],["c","3-c","2-c",88]]"#)
        #expect(String(buffer: try rewrite.rewriteBody(ByteBuffer(string: "[409]"))) == "[409,304,0]")
        #expect(String(buffer: try rewrite.rewriteBody(ByteBuffer(string: "[]"))) == "[0,304,0]")
    }

    @Test("nothing removed passes; everything removed is answered by the relay, never forwarded empty")
    func unchangedAndAllRemoved() throws {
        guard case .unchanged = try ChangesFilter(kind: .changes).filter(ByteBuffer(string: Self.changes), keep: { _ in true })
        else { Issue.record("expected unchanged"); return }
        guard case .answer(let changesAnswer) = try ChangesFilter(kind: .changes).filter(ByteBuffer(string: Self.changes),
                                                                                       keep: { _ in false })
        else { Issue.record("expected an answer"); return }
        #expect(String(buffer: changesAnswer) == "[]")
        guard case .answer(let proposeAnswer) = try ChangesFilter(kind: .proposeChanges)
            .filter(ByteBuffer(string: Self.proposals), keep: { _ in false })
        else { Issue.record("expected an answer"); return }
        #expect(String(buffer: proposeAnswer) == "[304,304,304]")
        // The empty "caught up" list itself is left alone.
        guard case .unchanged = try ChangesFilter(kind: .changes).filter(ByteBuffer(string: "[]"), keep: { _ in false })
        else { Issue.record("expected unchanged"); return }
    }

    // MARK: through the mediator

    static func filteringPolicy(hiding hidden: Set<String>) -> ScriptedPolicy {
        ScriptedPolicy(
            onHead: { ChangesFilter.Kind(profile: $0.profile) != nil && $0.type == .request ? .awaitBody() : .pass },
            onBody: { message, _ in ChangesFilter.decision(for: message, rule: "hide-docs") { !hidden.contains($0) } })
    }

    @Test("a filtered changes request reaches upstream shortened, and its reply returns in full positions")
    func filteredChangesThroughMediator() throws {
        let link = MediatedLink(policy: Self.filteringPolicy(hiding: ["b", "d"]))
        link.answerServerRequests = false
        link.clientRequest(1, profile: "changes", body: Self.changes, compressed: true)
        try link.pump()
        let received = try #require(link.serverReceived.first)
        #expect(received.number == 1 && received.isCompressed)
        #expect(String(buffer: received.body) == #"[[1,"a","1-a"],[3,"c\u0022q","1-c",true]]"#)
        link.server.send(reply: .reply(to: received, body: ByteBuffer(string: #"[[],["1-x"]]"#), compressed: true))
        try link.pump()
        let reply = try #require(link.clientReceived.first)
        #expect(reply.type == .response && reply.number == 1)
        #expect(String(buffer: reply.body) == #"[[],0,["1-x"]]"#)
        #expect(link.reports.map(\.action) == ["replace (changes 2/4)"])
    }

    /// Observers (the analyzer) see the changes request as its sender sent it, four entries; the
    /// reply they are given must be the one that sender got, in the same four positions, or the
    /// wanted entries pair with the wrong documents.
    @Test("observers are given the filtered list's reply as its requester got it, in full positions")
    func observersSeeTheMappedBackReply() throws {
        let link = MediatedLink(policy: Self.filteringPolicy(hiding: ["b", "d"]))
        link.answerServerRequests = false
        link.clientRequest(1, profile: "changes", body: Self.changes, compressed: true)
        try link.pump()
        let observedRequests = link.outputs.compactMap { $0.output.decoded?.message }
        let request = try #require(observedRequests.first)
        #expect(String(buffer: request.body) == Self.changes, "the request as its sender sent it")
        let received = try #require(link.serverReceived.first)
        link.server.send(reply: .reply(to: received, body: ByteBuffer(string: #"[[],["1-x"]]"#), compressed: true))
        try link.pump()
        let fromServer = link.outputs.filter { $0.direction == .serverToClient }.compactMap { $0.output.decoded?.message }
        let observed = try #require(fromServer.last)
        #expect(observed.type == .response && observed.number == 1)
        #expect(String(buffer: observed.body) == #"[[],0,["1-x"]]"#)
    }

    /// Each filtered list's reply mapping waits with its request for the upstream's reply; an
    /// upstream that never answers must not make the relay keep them all.
    @Test("reply mappings of unanswered filtered lists are kept only up to maxAwaitedReplies, the newest still mapped back")
    func unansweredReplyMappingsAreBounded() throws {
        var limits = MediationLimits()
        limits.decoder.maxAwaitedReplies = 8
        let link = MediatedLink(policy: Self.filteringPolicy(hiding: ["b", "d"]), limits: limits)
        link.answerServerRequests = false
        for seq in 1...40 { link.clientRequest(seq, profile: "changes", body: Self.changes) }
        try link.pump()
        #expect(link.serverReceived.count == 40)
        #expect(link.mediator.awaitedReplies == 8)
        #expect(link.mediator.forgottenReplies == 32)

        // The newest is still mapped back to its four positions.
        let newest = try #require(link.serverReceived.last)
        link.server.send(reply: .reply(to: newest, body: ByteBuffer(string: #"[[],["1-x"]]"#)))
        try link.pump()
        let reply = try #require(link.clientReceived.last)
        #expect(reply.number == 40 && String(buffer: reply.body) == #"[[],0,["1-x"]]"#)
        #expect(link.mediator.awaitedReplies == 7)
    }

    @Test("an all-filtered changes list is answered by the relay; the next request keeps its place")
    func allFilteredChangesAnswered() throws {
        let link = MediatedLink(policy: Self.filteringPolicy(hiding: ["a", "b", "c\"q", "c", "d"]))
        link.clientRequest(1, profile: "changes", body: Self.changes, compressed: true)
        link.clientRequest(2, profile: "proposeChanges", body: Self.proposals, compressed: true)
        link.clientRequest(3, profile: "changes", body: "[]", compressed: true)
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["3"])
        #expect(link.serverReceived.first?.number == 1)
        let replies = link.clientReceived.sorted { $0.number < $1.number }
        #expect(replies.map(\.number) == [1, 2, 3])
        #expect(replies.map { String(buffer: $0.body) } == ["[]", "[304,304,304]", ""])
        #expect(replies[2].properties["seq"] == "3")
        #expect(link.reports.map(\.action) == ["answer", "answer"])
    }

    @Test("a proposeChanges reply with 304s maps back while other traffic flows compressed")
    func proposeChangesThroughMediator() throws {
        let link = MediatedLink(policy: Self.filteringPolicy(hiding: ["b"]))
        link.answerServerRequests = false
        link.clientRequest(1, profile: "rev", body: String(repeating: "{\"k\":\"v\"}", count: 50), compressed: true)
        link.clientRequest(2, profile: "proposeChanges", body: Self.proposals, compressed: true)
        link.clientRequest(3, profile: "rev", body: String(repeating: "{\"k\":\"v\"}", count: 60), compressed: true)
        try link.pump()
        #expect(link.serverReceived.map { $0.properties["seq"] } == ["1", "2", "3"])
        for message in link.serverReceived {
            let body: ByteBuffer = message.profile == "proposeChanges" ? ByteBuffer(string: "[304]")
                : ByteBuffer(string: "{\"ok\":true}")
            link.server.send(reply: .reply(to: message, body: body, compressed: true))
        }
        try link.pump()
        let proposeReply = try #require(link.clientReceived.first { $0.number == 2 })
        #expect(String(buffer: proposeReply.body) == "[304,304,0]")
        #expect(link.clientReceived.filter { String(buffer: $0.body) == "{\"ok\":true}" }.count == 2)
    }
}
