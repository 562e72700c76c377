import Testing
@testable import Policy

@Suite("Connection rules at the handshake")
struct ConnectionPolicyTests {
    static func policy(_ yaml: String, dryRun: Bool = false) throws -> ConnectionPolicy {
        let document = try PolicyDocument(yaml: yaml)
        return ConnectionPolicy(rules: document.connectionRules, defaultAllows: document.connectionDefaultAllows, dryRun: dryRun)
    }

    static func facts(ip: String = "10.0.0.1", user: String? = "alice", database: String = "db",
                      protocols: [String] = ["BLIP_3+CBMobile_3"], tls: Bool = false) -> HandshakeFacts {
        HandshakeFacts(clientIP: ip, user: user, database: database, offeredSubprotocols: protocols, tls: tls)
    }

    func refusal(_ verdict: ConnectionVerdict) -> ConnectionRefusal? {
        if case .refuse(let refusal) = verdict { return refusal }
        return nil
    }

    @Test("deny by client IP, user, database and sub-protocol; allow ends the checks")
    func denyAndAllow() throws {
        let policy = try Self.policy("""
            connections:
              rules:
                - { name: vip, match: { user: root }, allow: true }
                - { name: net, match: { clientIP: 203.0.113.0/24 }, deny: { status: 403, message: blocked } }
                - { name: users, match: { user: "re:^mallory" }, deny: true }
                - { name: dbs, match: { database: "secret-*" }, deny: { status: 404, message: "no such db" } }
                - { name: old, match: { subprotocol: "BLIP_3+CBMobile_1" }, deny: true }
            """)
        #expect(refusal(policy.admit(Self.facts(ip: "203.0.113.9"), now: 0)) == ConnectionRefusal(status: 403, retryAfter: nil, reason: "blocked", rule: "net", dryRun: false))
        #expect(refusal(policy.admit(Self.facts(user: "mallory2"), now: 0))?.rule == "users")
        #expect(refusal(policy.admit(Self.facts(database: "secret-db"), now: 0))?.status == 404)
        #expect(refusal(policy.admit(Self.facts(protocols: ["BLIP_3+CBMobile_1"]), now: 0))?.rule == "old")
        #expect(policy.admit(Self.facts(protocols: ["BLIP_3+CBMobile_3", "BLIP_3+CBMobile_1"]), now: 0).admits == false,
                "any offered sub-protocol matches")
        #expect(policy.admit(Self.facts(ip: "203.0.113.9", user: "root"), now: 0) == .allow)
        #expect(policy.admit(Self.facts(), now: 0) == .allow)
    }

    @Test("default deny admits only what an allow rule matches")
    func defaultDeny() throws {
        let policy = try Self.policy("connections: { default: deny, rules: [{ name: office, match: { clientIP: 10.0.0.0/8 }, allow: true }] }")
        #expect(policy.admit(Self.facts(ip: "10.2.3.4"), now: 0) == .allow)
        #expect(refusal(policy.admit(Self.facts(ip: "8.8.8.8"), now: 0))?.rule == "default")
    }

    @Test("requireTLS refuses plain ws with 403")
    func requireTLS() throws {
        let policy = try Self.policy("connections: { rules: [{ name: tls, requireTLS: true }] }")
        #expect(refusal(policy.admit(Self.facts(tls: false), now: 0))?.status == 403)
        #expect(policy.admit(Self.facts(tls: true), now: 0) == .allow)
    }

    @Test("maxSessions per user, per IP and in total, with Retry-After; closing frees a slot")
    func maxSessions() throws {
        let policy = try Self.policy("""
            connections:
              rules:
                - { name: caps, maxSessions: { total: 4, perUser: 2, perIP: 3, status: 429, retryAfter: 7s } }
            """)
        let alice = Self.facts(ip: "10.0.0.1", user: "alice")
        #expect(policy.admit(alice, now: 0) == .allow)
        #expect(policy.admit(alice, now: 0) == .allow)
        let third = try #require(refusal(policy.admit(alice, now: 0)))
        #expect(third.status == 429 && third.retryAfter == 7 && third.reason.contains("user"))
        #expect(policy.admit(Self.facts(ip: "10.0.0.1", user: "bob"), now: 0) == .allow)
        #expect(refusal(policy.admit(Self.facts(ip: "10.0.0.1", user: "carol"), now: 0))?.reason.contains("address") == true)
        #expect(policy.admit(Self.facts(ip: "10.0.0.2", user: nil), now: 0) == .allow)
        #expect(refusal(policy.admit(Self.facts(ip: "10.0.0.3", user: nil), now: 0))?.reason.contains("4 sessions") == true)
        #expect(policy.state.sessionCounts.total == 4)
        policy.sessionClosed(alice)
        #expect(policy.admit(Self.facts(ip: "10.0.0.3", user: nil), now: 0) == .allow)
        #expect(policy.state.sessionCounts.perUser["alice"] == 1)
    }

    @Test("handshake rate per client IP: the burst, then 429 with the wait as Retry-After")
    func handshakeRate() throws {
        let policy = try Self.policy("connections: { rules: [{ name: flood, handshakeRate: { perSecond: 0.5, burst: 2 } }] }")
        let ip = Self.facts(ip: "10.0.0.9")
        #expect(policy.admit(ip, now: 0) == .allow)
        #expect(policy.admit(ip, now: 0) == .allow)
        let refused = try #require(refusal(policy.admit(ip, now: 0)))
        #expect(refused.status == 429 && refused.retryAfter == 2)
        #expect(policy.admit(Self.facts(ip: "10.0.0.10"), now: 0) == .allow, "another address has its own bucket")
        #expect(policy.admit(ip, now: 2_000_000_000) == .allow)
    }

    @Test("dry run: the refusal is reported, the session is admitted and counted")
    func dryRun() throws {
        let policy = try Self.policy("connections: { rules: [{ name: tls, requireTLS: true }] }", dryRun: true)
        let verdict = policy.admit(Self.facts(), now: 0)
        #expect(verdict.admits)
        #expect(refusal(verdict)?.dryRun == true && refusal(verdict)?.rule == "tls")
        #expect(policy.state.sessionCounts.total == 1)
        let mixed = try Self.policy("""
            connections: { rules: [{ name: soft, requireTLS: true, dryRun: true }, { name: hard, match: { user: eve }, deny: true }] }
            """)
        #expect(refusal(mixed.admit(Self.facts(user: "eve"), now: 0))?.rule == "hard", "an enforced refusal wins over a dry-run one")
        #expect(refusal(mixed.admit(Self.facts(user: "ann"), now: 0))?.rule == "soft")
    }
}
