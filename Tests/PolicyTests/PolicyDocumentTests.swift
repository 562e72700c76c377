import BLIPCore
import Foundation
import Testing
@testable import Policy

@Suite("Policy file: parsing and errors that name the rule and field")
struct PolicyDocumentTests {
    static let issueExample = """
        rules:
          - name: no-drafts
            match: { from: client, profile: rev, doc: "draft-*" }
            action: { deny: { domain: HTTP, code: 403, message: "drafts stay on the device" } }
          - name: slow-revs
            match: { from: server, profile: rev }
            action: { rateLimit: { perSecond: 50, burst: 100, key: user, onExceed: delay } }
        """

    @Test("the issue's example parses into a deny and a delaying rate limit")
    func issueExample() throws {
        let document = try PolicyDocument(yaml: Self.issueExample)
        #expect(document.rules.map(\.name) == ["no-drafts", "slow-revs"])
        guard case .deny(let reply) = document.rules[0].action else { Issue.record("not a deny"); return }
        #expect(reply == ErrorReply(domain: "HTTP", code: 403, message: "drafts stay on the device"))
        #expect(document.rules[0].match.direction == .clientToServer)
        #expect(document.rules[0].match.profiles == ["rev"])
        guard case .rateLimit(let limit) = document.rules[1].action else { Issue.record("not a rate limit"); return }
        #expect(limit.perSecond == 50 && limit.burst == 100 && limit.key == .user && limit.onExceed == .delay)
        #expect(document.connectionRules.isEmpty && document.connectionDefaultAllows)
    }

    @Test("samples/policy.yaml parses: every key and action docs/policy.md documents is accepted")
    func samplePolicyParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try PolicyDocument(contentsOf: root.appendingPathComponent("samples/policy.yaml").path)
        let actions = Set(document.rules.map(\.action.name))
        #expect(actions == ["deny", "filterChanges", "rateLimit", "delay", "errorReply", "close", "withholdAcks",
                            "replyLatency", "bandwidth"])
        #expect(document.rules.contains {
            $0.name == "read-only-guests" && $0.match.profiles == ["changes", "proposeChanges", "rev", "putRev"]
        })
        #expect(document.rules.contains { $0.dryRun })
        #expect(document.rules.contains { $0.toxicity < 1 && $0.limit != nil })
        #expect(document.connectionRules.count == 6)
    }

    @Test("an empty file is an empty policy")
    func emptyFile() throws {
        let document = try PolicyDocument(yaml: "")
        #expect(document.rules.isEmpty && document.connectionRules.isEmpty)
    }

    @Test("readOnly keeps the rule's other keys and narrows it to the client's push requests")
    func readOnlyExpansion() throws {
        let document = try PolicyDocument(yaml: """
            rules:
              - name: guests
                match: { user: "guest-*", profile: [rev, getCheckpoint, changes] }
                action: { readOnly: { message: "guests only read" } }
            """)
        let rule = document.rules[0]
        #expect(rule.match.direction == .clientToServer)
        #expect(rule.match.profiles == ["rev", "changes"])
        #expect(rule.match.user?.source == "guest-*")
        guard case .deny(let reply) = rule.action else { Issue.record("readOnly is a deny"); return }
        #expect(reply.code == 403 && reply.message == "guests only read")
    }

    /// Each broken file and the exact place its error must name.
    @Test("every kind of mistake is reported with its rule and field", arguments: [
        ("rules: [{ name: a, action: { deny: {} }, mtach: { from: client } }]", "rule \"a\"", "mtach", "unknown key"),
        ("rules: [{ name: a, match: { form: client }, action: { deny: {} } }]", "rule \"a\"", "match.form", "unknown key"),
        ("rules: [{ name: a, match: { from: browser }, action: { deny: {} } }]", "rule \"a\"", "match.from", "client or server"),
        ("rules: [{ match: { from: client }, action: { deny: {} } }]", "rule #1", "name", "is required"),
        ("rules: [{ name: a }]", "rule \"a\"", "action", "is required"),
        ("rules: [{ name: a, action: { } }]", "rule \"a\"", "action", "names no action"),
        ("rules: [{ name: a, action: { deny: {}, delay: 1s } }]", "rule \"a\"", "action", "names 2 actions"),
        ("rules: [{ name: a, action: { explode: {} } }]", "rule \"a\"", "action.explode", "unknown key"),
        ("rules: [{ name: slow-revs, action: { rateLimit: { perSecond: -5 } } }]", "rule \"slow-revs\"", "action.rateLimit.perSecond", "must be a positive number"),
        ("rules: [{ name: a, action: { rateLimit: { perSecond: 5, key: device } } }]", "rule \"a\"", "action.rateLimit.key", "session, user, clientIP, global"),
        ("rules: [{ name: a, action: { rateLimit: { key: user } } }]", "rule \"a\"", "action.rateLimit", "perSecond and/or bytesPerSecond"),
        ("rules: [{ name: a, action: { rateLimit: { perSecond: 5, onExceed: queue } } }]", "rule \"a\"", "action.rateLimit.onExceed", "delay or deny"),
        ("rules: [{ name: a, action: { deny: { code: 200 } } }]", "rule \"a\"", "action.deny.code", "400…599"),
        ("rules: [{ name: a, action: { delay: soon } }]", "rule \"a\"", "action.delay", "duration"),
        ("rules: [{ name: a, action: { delay: { min: 2s, max: 1s } } }]", "rule \"a\"", "action.delay.max", "less than min"),
        ("rules: [{ name: a, action: { close: { code: 1000 } } }]", "rule \"a\"", "action.close.code", "1001, 1006, 1011, 4001, 4002"),
        ("rules: [{ name: a, action: { close: { code: 1011, afterMessages: 0 } } }]", "rule \"a\"", "action.close.afterMessages", "positive"),
        ("rules: [{ name: a, action: { errorReply: {}, toxicity: 1.5 } }]", "rule \"a\"", "action.toxicity", "0 to 1"),
        ("rules: [{ name: a, action: { errorReply: {}, limit: 0 } }]", "rule \"a\"", "action.limit", "positive"),
        ("rules: [{ name: a, match: { doc: \"re:[unclosed\" }, action: { deny: {} } }]", "rule \"a\"", "match.doc", "regular expression"),
        ("rules: [{ name: a, match: { clientIP: 10.0.0.0/33 }, action: { deny: {} } }]", "rule \"a\"", "match.clientIP", "CIDR"),
        ("rules: [{ name: a, match: { minBodySize: lots }, action: { deny: {} } }]", "rule \"a\"", "match.minBodySize", "byte count"),
        ("rules: [{ name: a, match: { minBodySize: 10, maxBodySize: 5 }, action: { deny: {} } }]", "rule \"a\"", "match.maxBodySize", "less than minBodySize"),
        ("rules: [{ name: a, match: { attachment: { kind: video } }, action: { deny: {} } }]", "rule \"a\"", "match.attachment.kind", "unknown key"),
        ("rules: [{ name: a, match: { from: server }, action: readOnly }]", "rule \"a\"", "match", "from must be client"),
        ("rules: [{ name: a, action: { deny: {} } }, { name: a, action: { deny: {} } }]", "rule \"a\"", "name", "unique"),
        ("rules: { name: a }", "policy", "rules", "list of rules"),
        ("rulez: []", "policy", "rulez", "unknown key"),
        ("connections: { default: maybe }", "policy", "connections.default", "allow or deny"),
        ("connections: { rules: [{ name: c, maxSessions: { perUser: 0 } }] }", "connection rule \"c\"", "maxSessions.perUser", "positive"),
        ("connections: { rules: [{ name: c, maxSessions: { total: 5, status: 500 } }] }", "connection rule \"c\"", "maxSessions.status", "429 or 503"),
        ("connections: { rules: [{ name: c, handshakeRate: { burst: 3 } }] }", "connection rule \"c\"", "handshakeRate.perSecond", "is required"),
        ("connections: { rules: [{ name: c, match: { ip: 1.2.3.4 }, deny: true }] }", "connection rule \"c\"", "match.ip", "unknown key"),
        ("connections: { rules: [{ name: c, deny: true, allow: true }] }", "connection rule \"c\"", "", "2 actions"),
        ("rules: [{ name: a, action: { rateLimit: { perSecond: 5, key: user, scope: cluster } } }]", "rule \"a\"", "action.rateLimit.scope", "local or fleet"),
        ("rules: [{ name: a, action: { rateLimit: { perSecond: 5, scope: fleet } } }]", "rule \"a\"", "action.rateLimit.scope", "never shared"),
        ("connections: { rules: [{ name: c, maxSessions: { perUser: 2, scope: world } }] }", "connection rule \"c\"", "maxSessions.scope", "local or fleet"),
    ])
    func errorsNameRuleAndField(yaml: String, location: String, field: String, problem: String) {
        do {
            _ = try PolicyDocument(yaml: yaml)
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.location == location, "\(error)")
            #expect((error.field ?? "") == field, "\(error)")
            #expect(error.description.contains(problem), "\(error)")
            #expect(error.description.hasPrefix(location))
        }
    }

    @Test("not YAML, and a missing file, are reported as such")
    func unreadable() {
        #expect(throws: PolicyError.self) { try PolicyDocument(yaml: "rules: [ { name: a") }
        do {
            _ = try PolicyDocument(contentsOf: "/nonexistent/policy.yaml")
            Issue.record("read a missing file")
        } catch {
            #expect(error.description.hasPrefix("cannot read /nonexistent/policy.yaml"))
        }
    }
}
