import BLIPCore
import BLIPTestSupport
import Testing
@testable import Policy

@Suite("Policy engine: verdicts per message")
struct PolicyEngineTests {
    static let ms: UInt64 = 1_000_000
    static let alice = SessionFacts(id: 1, user: "alice", clientIP: "10.0.0.1")
    static let bob = SessionFacts(id: 2, user: "bob", clientIP: "10.0.0.2")

    static func engine(_ yaml: String, seed: UInt64 = 1, dryRun: Bool = false) throws -> PolicyEngine {
        PolicyEngine(rules: try PolicyDocument(yaml: yaml).rules, state: PolicyState(random: SeededRandom(seed: seed)), dryRun: dryRun)
    }

    static func request(_ profile: String, from direction: BLIPDirection = .clientToServer, id: String = "doc-1",
                        noReply: Bool = false, bodySize: Int? = nil) -> MessageFacts {
        MessageFacts(direction: direction, type: .request, number: 1, noReply: noReply,
                     properties: Properties([("Profile", profile), ("id", id)]), bodySize: bodySize)
    }

    func actions(_ verdicts: PolicyVerdicts) -> [String] { verdicts.verdicts.map { "\($0.rule): \($0.action)" } }

    @Test("the issue's example: drafts denied with the configured error, other revs pass")
    func denyDrafts() throws {
        let engine = try Self.engine(PolicyDocumentTests.issueExample)
        let denied = engine.evaluate(Self.request("rev", id: "draft-7"), session: Self.alice, now: 0)
        #expect(actions(denied) == ["no-drafts: deny HTTP 403 \"drafts stay on the device\""])
        #expect(denied.enforced.count == 1)
        #expect(engine.evaluate(Self.request("rev", id: "final-7"), session: Self.alice, now: 0).isEmpty)
        let silent = engine.evaluate(Self.request("rev", id: "draft-7", noReply: true), session: Self.alice, now: 0)
        // A NoReply request keeps its deny: no ERR goes back (the mediator sends none), but a
        // rev's receiver gets a norev with this status (Sync Gateway sends revs NoReply).
        #expect(actions(silent) == ["no-drafts: deny HTTP 403 \"drafts stay on the device\""])
    }

    @Test("rate limit with onExceed delay: the burst passes, then delays that grow in order, per user")
    func rateLimitDelays() throws {
        let engine = try Self.engine("""
            rules: [{ name: slow, match: { from: server, profile: rev }, action: { rateLimit: { perSecond: 10, burst: 2, key: user } } }]
            """)
        let rev = Self.request("rev", from: .serverToClient)
        var delays: [UInt64] = []
        for _ in 0..<4 {
            let verdicts = engine.evaluate(rev, session: Self.alice, now: 0)
            if case .delay(let ns)? = verdicts.verdicts.first?.action { delays.append(ns) } else { delays.append(0) }
        }
        #expect(delays == [0, 0, 100 * Self.ms, 200 * Self.ms])
        #expect(engine.evaluate(rev, session: Self.bob, now: 0).isEmpty, "bob has his own bucket")
        #expect(engine.evaluate(Self.request("rev"), session: Self.alice, now: 0).isEmpty, "client revs are not limited")
        let later = engine.evaluate(rev, session: Self.alice, now: 1000 * Self.ms)
        #expect(later.isEmpty, "after a second the debt is paid and a token is back")
        #expect(engine.state.bucket(.init(rule: "slow", value: "messages|user:alice")) != nil)
    }

    @Test("rate limit with onExceed deny answers 429; bytes/s needs the body")
    func rateLimitDeny() throws {
        let engine = try Self.engine("""
            rules:
              - { name: msgs, match: { profile: changes }, action: { rateLimit: { perSecond: 1, burst: 1, key: global, onExceed: deny } } }
              - { name: bytes, match: { profile: rev }, action: { rateLimit: { bytesPerSecond: 1000, burstBytes: 1500, key: clientIP, onExceed: deny } } }
            """)
        #expect(engine.evaluate(Self.request("changes"), session: Self.alice, now: 0).isEmpty)
        #expect(actions(engine.evaluate(Self.request("changes"), session: Self.bob, now: 0))
                == ["msgs: deny HTTP 429 \"rate limit exceeded\""], "global: one bucket for everyone")
        let head = engine.evaluate(Self.request("rev"), session: Self.alice, now: 0)
        #expect(head.needsBody && head.verdicts.isEmpty)
        #expect(engine.evaluate(Self.request("rev", bodySize: 1000), session: Self.alice, now: 0).verdicts.isEmpty)
        #expect(actions(engine.evaluate(Self.request("rev", bodySize: 1000), session: Self.alice, now: 0))
                == ["bytes: deny HTTP 429 \"rate limit exceeded\""])
        #expect(engine.evaluate(Self.request("rev", bodySize: 1000), session: Self.alice, now: 500 * Self.ms).verdicts.isEmpty)
    }

    @Test("toxicity acts on about that share of matches, repeatably with a seeded source")
    func toxicity() throws {
        let yaml = "rules: [{ name: flaky, match: { profile: getCheckpoint }, action: { errorReply: { code: 503 }, toxicity: 0.25 } }]"
        func hits(seed: UInt64) throws -> [Bool] {
            let engine = try Self.engine(yaml, seed: seed)
            return (0..<400).map { _ in !engine.evaluate(Self.request("getCheckpoint"), session: Self.alice, now: 0).verdicts.isEmpty }
        }
        let first = try hits(seed: 42)
        #expect(first == (try hits(seed: 42)), "same seed, same faults")
        #expect(first != (try hits(seed: 43)))
        let count = first.filter { $0 }.count
        #expect((60...140).contains(count), "about a quarter of 400, got \(count)")
    }

    @Test("limit: a rule acts at most N times, counted across sessions")
    func limit() throws {
        let engine = try Self.engine("rules: [{ name: twice, match: { profile: rev }, action: { errorReply: {}, limit: 2 } }]")
        let sessions = [Self.alice, Self.bob, Self.alice, Self.bob]
        let acted = sessions.map { !engine.evaluate(Self.request("rev"), session: $0, now: 0).verdicts.isEmpty }
        #expect(acted == [true, true, false, false])
        #expect(engine.state.applied(rule: "twice") == 2)
    }

    @Test("a counted close fires once per session on the Nth match (after forwarding it); an uncounted one at once")
    func closeFaults() throws {
        let engine = try Self.engine("""
            rules:
              - { name: third, match: { from: server, profile: rev }, action: { close: { code: 1006, afterMessages: 3 } } }
              - { name: kill, match: { profile: kill }, action: { close: { code: 4001, reason: bye } } }
            """)
        let rev = Self.request("rev", from: .serverToClient)
        let fired = (0..<5).map { _ in actions(engine.evaluate(rev, session: Self.alice, now: 0)) }
        #expect(fired == [[], [], ["third: close 1006 \"closed by policy\" after forwarding"], [], []])
        #expect(actions(engine.evaluate(rev, session: Self.bob, now: 0)).isEmpty, "bob counts on his own")
        engine.sessionEnded(Self.alice.id)
        #expect(actions(engine.evaluate(Self.request("kill"), session: Self.alice, now: 0)) == ["kill: close 4001 \"bye\""])
    }

    @Test("all matching rules act in order until a terminal one; delays, latency, ACKs and bandwidth resolve")
    func ordering() throws {
        let engine = try Self.engine("""
            rules:
              - { name: wait, match: { profile: getRev }, action: { delay: 20ms } }
              - { name: latency, match: { profile: getRev }, action: { replyLatency: { latency: 100ms, jitter: 50ms } } }
              - { name: acks, match: { profile: getRev }, action: { withholdAcks: 2s } }
              - { name: pipe, match: { profile: getRev }, action: { bandwidth: 64KB } }
              - { name: stop, match: { profile: getRev }, action: { deny: { code: 410, message: gone } } }
              - { name: never, match: { profile: getRev }, action: { delay: 1s } }
            """)
        let verdicts = engine.evaluate(Self.request("getRev"), session: Self.alice, now: 0).verdicts
        #expect(verdicts.map(\.rule) == ["wait", "latency", "acks", "pipe", "stop"])
        guard case .replyLatency(let latency) = verdicts[1].action else { Issue.record("no latency"); return }
        #expect((50 * Self.ms...150 * Self.ms).contains(latency))
        #expect(verdicts.map { $0.action.description.prefix { $0 != " " } } == ["delay", "replyLatency", "withholdAcks", "bandwidth", "deny"])
        #expect(!verdicts.contains { $0.fromRateLimit })
    }

    @Test("profile: a reply matches by its request's profile; type: request keeps a rule to requests")
    func repliesMatchByTheirRequestsProfile() throws {
        let engine = try Self.engine("""
            rules:
              - name: thin-pipe
                match: { from: server, profile: getAttachment }
                action: { bandwidth: { bytesPerSecond: 64KB } }
              - name: slow-revs
                match: { from: server, type: request, profile: rev }
                action: { delay: 20ms }
            """)
        let attachmentData = MessageFacts(direction: .serverToClient, type: .response, number: 3,
                                          properties: Properties([]), requestProfile: "getAttachment")
        #expect(actions(engine.evaluate(attachmentData, session: Self.alice, now: 0)) == ["thin-pipe: bandwidth 65536 B/s"])
        let revAck = MessageFacts(direction: .serverToClient, type: .response, number: 4,
                                  properties: Properties([]), requestProfile: "rev")
        #expect(engine.evaluate(revAck, session: Self.alice, now: 0).isEmpty)
        #expect(actions(engine.evaluate(Self.request("rev", from: .serverToClient), session: Self.alice, now: 0))
            == ["slow-revs: delay 20.0ms"])
        let unknown = MessageFacts(direction: .serverToClient, type: .response, number: 5, properties: Properties([]))
        #expect(engine.evaluate(unknown, session: Self.alice, now: 0).isEmpty)
    }

    @Test("filterChanges resolves only for changes and proposeChanges requests")
    func filterChanges() throws {
        let engine = try Self.engine("rules: [{ name: hide, action: { filterChanges: { doc: \"_internal:*\" } } }]")
        let verdict = engine.evaluate(Self.request("proposeChanges"), session: Self.alice, now: 0).verdicts.first
        guard case .filterChanges(let doc)? = verdict?.action else { Issue.record("no filter"); return }
        #expect(doc.matches("_internal:x") && !doc.matches("public"))
        #expect(engine.evaluate(Self.request("rev"), session: Self.alice, now: 0).isEmpty)
    }

    @Test("readOnly denies the client's push and lets pulls through")
    func readOnly() throws {
        let engine = try Self.engine("rules: [{ name: ro, action: readOnly }]")
        // Written out, not read from the code under test: the pushes a read-only client may not make.
        #expect(MessageRule.pushProfiles == ["changes", "proposeChanges", "rev", "putRev"])
        for profile in ["changes", "proposeChanges", "rev", "putRev"] {
            #expect(actions(engine.evaluate(Self.request(profile), session: Self.alice, now: 0))
                    == ["ro: deny HTTP 403 \"read-only: pushing is not allowed\""])
        }
        for profile in ["subChanges", "getCheckpoint", "setCheckpoint", "getAttachment"] {
            #expect(engine.evaluate(Self.request(profile), session: Self.alice, now: 0).isEmpty, "\(profile)")
        }
        #expect(engine.evaluate(Self.request("rev", from: .serverToClient), session: Self.alice, now: 0).isEmpty)
    }

    @Test("dry run marks verdicts without changing them: per rule, or for the whole policy")
    func dryRun() throws {
        let yaml = """
            rules:
              - { name: a, match: { profile: rev }, action: { deny: {} }, dryRun: true }
              - { name: b, match: { profile: changes }, action: { deny: {} } }
            """
        let engine = try Self.engine(yaml)
        #expect(engine.evaluate(Self.request("rev"), session: Self.alice, now: 0).verdicts.map(\.dryRun) == [true])
        #expect(engine.evaluate(Self.request("rev"), session: Self.alice, now: 0).enforced.isEmpty)
        #expect(engine.evaluate(Self.request("changes"), session: Self.alice, now: 0).verdicts.map(\.dryRun) == [false])
        let all = try Self.engine(yaml, dryRun: true)
        #expect(all.evaluate(Self.request("changes"), session: Self.alice, now: 0).verdicts.map(\.dryRun) == [true])
    }

    @Test("a denied reply is dropped (no ERR answers a reply)")
    func deniedReply() throws {
        let engine = try Self.engine("rules: [{ name: r, match: { from: server, type: reply }, action: { deny: {} } }]")
        let reply = MessageFacts(direction: .serverToClient, type: .response, properties: [:])
        #expect(actions(engine.evaluate(reply, session: Self.alice, now: 0)) == ["r: drop"])
    }

    @Test("profile masks: more profile names than mask bits, unknown profiles, rules without a profile key")
    func manyProfiles() throws {
        let rules = (0..<70).map { "  - { name: r\($0), match: { profile: [p\($0), shared] }, action: { delay: 1ms } }" }
        let engine = try Self.engine("rules:\n" + rules.joined(separator: "\n") + "\n  - { name: any, action: { delay: 2ms } }")
        for index in [0, 62, 63, 69] {
            #expect(engine.evaluate(Self.request("p\(index)"), session: Self.alice, now: 0).verdicts.map(\.rule) == ["r\(index)", "any"])
        }
        #expect(engine.evaluate(Self.request("shared"), session: Self.alice, now: 0).verdicts.count == 71)
        #expect(engine.evaluate(Self.request("unknown"), session: Self.alice, now: 0).verdicts.map(\.rule) == ["any"])
        let reply = MessageFacts(direction: .serverToClient, type: .response, properties: [:])
        #expect(engine.evaluate(reply, session: Self.alice, now: 0).verdicts.map(\.rule) == ["any"])
    }
}
