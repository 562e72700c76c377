import BLIPCore
import NIOCore
import Testing
@testable import Replication

/// Messages of profiles the replication protocol does not define (the relay's echo benchmark,
/// application profiles), messages without a profile, and replies the analyzer cannot pair:
/// what the analyzer makes of them, pinned so that cheaper handling gives the same results.
@Suite("Unknown profiles: typed view, summary, stats")
struct UnknownProfileTests {
    /// `message` with its properties as the decoder delivers them: a block, not a list of pairs.
    static func decoded(_ message: BLIPMessage) throws -> BLIPMessage {
        var block = ByteBuffer()
        message.properties.encode(into: &block)
        var wire = message
        wire.properties = try Properties.decode(from: &block, maxSize: 1 << 16)
        return wire
    }

    @Test("an echo exchange is shown generically, paired, timed and counted under its profile",
          arguments: [false, true])
    func echo(decoded: Bool) throws {
        let script = Script()
        let body = String(repeating: "e", count: 300)
        var sent = request("echo", 1, body: body)
        var answer = reply(1, body: body)
        if decoded { (sent, answer) = (try Self.decoded(sent), try Self.decoded(answer)) }
        let analyzedRequest = script.client(sent)
        let analyzedReply = script.server(answer, after: 0.5)

        #expect(analyzedRequest.summary == "echo (300 B)")
        #expect(analyzedRequest.latency == nil && analyzedRequest.findings.isEmpty && analyzedRequest.from == .clientToServer)
        let typed = analyzedRequest.message
        #expect(typed.type == .request && typed.number == 1 && typed.profile == "echo" && typed.knownProfile == nil)
        #expect(typed.content == .generic(GenericMessage(propertyCount: 1, bodyBytes: 300)))
        #expect(typed.collection == nil && typed.collectionName == nil && typed.bodyBytes == 300)
        #expect(typed.violations.isEmpty && typed.request == nil)

        #expect(analyzedReply.summary == "echo (300 B) → (300 B)")
        #expect(analyzedReply.latency == 0.5 && analyzedReply.findings.isEmpty && analyzedReply.from == .serverToClient)
        let typedReply = analyzedReply.message
        #expect(typedReply.type == .response && typedReply.number == 1 && typedReply.profile == "echo")
        #expect(typedReply.content == .generic(GenericMessage(propertyCount: 0, bodyBytes: 300)))
        #expect(typedReply.collection == nil && typedReply.collectionName == nil && typedReply.violations.isEmpty)
        #expect(typedReply.request?.summary == "echo (300 B)")

        let summary = script.analyzer.summary()
        #expect(summary.profiles == [ProfileStats(profile: "echo", requests: 1, replies: 1, latencyMin: 0.5, latencyMax: 0.5,
                                                  latencyTotal: 0.5)])
        #expect(summary.messagesFromClient == 1 && summary.messagesFromServer == 1)
        #expect(summary.bytesFromClient == 300 && summary.bytesFromServer == 300)
        #expect(summary.replicationType == "none" && summary.collectionMode == "undetermined")
        #expect(summary.protocolViolations == 0 && summary.errorsByDomainAndCode.isEmpty)
        #expect(script.analyzer.timelineDocumentIDs.isEmpty && script.analyzer.findings.isEmpty)
        #expect(script.stuck(after: 1000).isEmpty)
    }

    @Test("no profile, an empty one, a misspelt one, a reply nobody asked for")
    func oddOnes() {
        let script = Script()
        var bare = BLIPMessage(type: .request, number: 1, properties: ["x": "1"], body: bytes("ab"))
        bare.number = 1
        #expect(script.client(bare).summary == "(no profile) (2 B)")
        #expect(script.server(reply(1, body: "abc")).summary == "(no profile) (2 B) → (3 B)")
        #expect(script.client(request("", 2)).summary == " (0 B)")
        let misspelt = script.client(request("Rev", 3, [("id", "d"), ("collection", "0")], body: "{}"))
        #expect(misspelt.summary == "Rev (2 B)")
        #expect(misspelt.message.content == .generic(GenericMessage(propertyCount: 3, bodyBytes: 2)))
        #expect(misspelt.message.collection == nil && misspelt.message.violations.isEmpty)
        let stray = script.server(reply(9, [("a", "b")], body: "xyz"))
        #expect(stray.summary == "reply #9 → (3 B)" && stray.latency == nil)
        #expect(stray.message.profile == nil && stray.message.content == .generic(GenericMessage(propertyCount: 1, bodyBytes: 3)))
        let strayError = script.server(errorReply(10, code: 503, message: "busy"))
        #expect(strayError.summary == "reply #10 → ERR HTTP 503: busy")
        let names = script.analyzer.summary().profiles.map(\.profile)
        #expect(names == ["", "(none)", "Rev"])
        #expect(script.analyzer.summary().errorsByDomainAndCode == ["HTTP 503": 1])
        #expect(script.analyzer.summary().collectionMode == "undetermined")
    }

    @Test("an error reply to an unknown profile is read as an error and counted")
    func errorToUnknown() {
        let script = Script()
        script.client(request("echo", 1, body: "hi"))
        let answer = script.server(errorReply(1, domain: "BLIP", code: 404, message: "no handler for echo"), after: 0.25)
        #expect(answer.summary == "echo (2 B) → ERR BLIP 404: no handler for echo")
        guard case .error(let error) = answer.message.content else {
            Issue.record("not read as an error: \(answer.message.content)")
            return
        }
        #expect(error.domain == "BLIP" && error.code == 404 && error.message == "no handler for echo")
        #expect(answer.message.profile == "echo" && answer.latency == 0.25)
        let stats = script.analyzer.summary().profiles
        #expect(stats == [ProfileStats(profile: "echo", requests: 1, errors: 1, latencyMin: 0.25, latencyMax: 0.25, latencyTotal: 0.25)])
        #expect(script.analyzer.summary().errorsByDomainAndCode == ["BLIP 404": 1])
    }

    @Test("the first Profile property counts, as for known profiles")
    func firstProfileWins() {
        let unknownFirst = BLIPMessage(type: .request, number: 1, properties: Properties([("Profile", "echo"), ("Profile", "rev")]))
        #expect(ReplicationMessage(unknownFirst).content == .generic(GenericMessage(propertyCount: 2, bodyBytes: 0)))
        #expect(ReplicationMessage(unknownFirst).profile == "echo")
        let knownFirst = BLIPMessage(type: .request, number: 1, properties: Properties([("Profile", "PING"), ("Profile", "echo")]))
        #expect(ReplicationMessage(knownFirst).content == .ping && ReplicationMessage(knownFirst).knownProfile == .ping)
    }

    @Test("unknown requests without a reply, unanswered ones, and the stuck report")
    func noReplyAndUnanswered() {
        let script = Script()
        script.client(request("fireAndForget", 1, noReply: true))
        script.client(request("slow", 2))
        let stats = script.analyzer.summary().profiles
        #expect(stats.map(\.profile) == ["fireAndForget", "slow"])
        #expect(stats[0].requests == 1 && stats[0].noReply == 1 && stats[1].requests == 1 && stats[1].noReply == 0)
        let stuck = script.stuck(after: 10_000)
        #expect(stuck.map(\.kind) == [.unansweredRequest])
        #expect(stuck.first?.profile == "slow" && stuck.first?.number == 2)
        #expect(stuck.first?.message.hasPrefix("slow (0 B) sent by ") == true)
    }

    @Test("past the profile cap, new profiles' requests and replies count under (other)")
    func profileCap() {
        let script = Script()
        for index in 1...(SessionState.maxProfiles + 3) {
            let number = MessageNumber(index)
            script.client(request("p\(index)", number))
            script.server(reply(number), after: 0.001)
        }
        let stats = script.analyzer.summary().profiles
        #expect(stats.count == SessionState.maxProfiles + 1)
        let other = stats.first { $0.profile == "(other)" }
        #expect(other?.requests == 3 && other?.replies == 3)
        #expect(stats.first { $0.profile == "p1" }?.replies == 1)
        #expect(!stats.contains { $0.profile == "p\(SessionState.maxProfiles + 1)" })
        // A known profile arriving after the cap counts under (other) too.
        script.client(request("PING", 1000))
        script.server(reply(1000))
        #expect(script.analyzer.summary().profiles.first { $0.profile == "(other)" }?.requests == 4)
    }

    @Test("replies whose request defines no content need no reading: empty, an attachment's size")
    func plainReplies() {
        let script = Script()
        script.client(request("rev", 1, [("id", "d"), ("rev", revA1)], body: "{}"))
        let accepted = script.server(reply(1, [("junk", "1")], body: "ignored"))
        #expect(accepted.message.content == .emptyReply && accepted.message.violations.isEmpty)
        #expect(accepted.summary == "rev d 1-0000… (2 B) → ok")
        script.server(request("getAttachment", 1, [("digest", "sha1-X"), ("docID", "d")]))
        let attachment = script.client(reply(1, body: "12345"))
        #expect(attachment.message.content == .attachment(bytes: 5) && attachment.summary == "getAttachment sha1-X → 5 B")
        script.client(request("PING", 2))
        #expect(script.server(reply(2)).summary == "PING → ok")
    }
}
