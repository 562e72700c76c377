import BLIPCore
import Foundation
import NIOConcurrencyHelpers
import Policy
import Testing

/// `scope: fleet` on `rateLimit` and `maxSessions`: parsed, local by default, refused by a store
/// without a fleet, and handed to the fleet's allowance (never a local bucket) when there is one.
@Suite struct FleetScopeTests {
    static let yaml = """
        rules:
          - name: per-user
            match: { from: client, profile: rev }
            action: { rateLimit: { perSecond: 30, key: user, onExceed: deny, scope: fleet } }
          - name: per-session
            action: { rateLimit: { perSecond: 30 } }
        connections:
          rules:
            - name: two-devices
              maxSessions: { perUser: 2, scope: fleet }
        """

    @Test func scopesAreReadAndLocalByDefault() throws {
        let document = try PolicyDocument(yaml: Self.yaml)
        guard case .rateLimit(let fleet) = document.rules[0].action, case .rateLimit(let local) = document.rules[1].action,
              case .maxSessions(let sessions) = document.connectionRules[0].action else {
            Issue.record("not the rules written")
            return
        }
        #expect(fleet.scope == .fleet && local.scope == .local && sessions.scope == .fleet)
        #expect(document.firstFleetScope?.location == "rule \"per-user\"")
        #expect(try PolicyDocument(yaml: "rules: [{ name: a, action: { rateLimit: { perSecond: 1 } } }]").firstFleetScope == nil)
    }

    @Test func aStoreWithoutAFleetRefusesFleetScopeWithTheRuleAndField() throws {
        let path = NSTemporaryDirectory() + "fleet-policy-\(UUID().uuidString).yaml"
        try Self.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try PolicyStore(path: path)
            Issue.record("accepted a fleet scope without a fleet")
        } catch {
            #expect(error.location == "rule \"per-user\"")
            #expect(error.field == "action.rateLimit.scope")
            #expect(error.description.contains("--redis"), "\(error)")
        }
        let store = try PolicyStore(path: path, state: PolicyState(fleet: RecordingFleet(), fleetSessions: RecordingFleet()))
        #expect(store.ruleCount == 3)
    }

    @Test func aFleetRateLimitAsksTheFleetAndItsAnswerIsTheVerdict() throws {
        let fleet = RecordingFleet()
        let document = try PolicyDocument(yaml: Self.yaml)
        let engine = PolicyEngine(rules: document.rules, state: PolicyState(fleet: fleet, fleetSessions: fleet))
        let session = SessionFacts(id: 7, user: "alice", clientIP: "10.0.0.1")
        let rev = MessageFacts(direction: .clientToServer, type: .request, number: 1, properties: Properties([("Profile", "rev")]))
        fleet.answer = .granted
        #expect(engine.evaluate(rev, session: session, now: 1).verdicts.isEmpty)
        fleet.answer = .refused
        let refused = engine.evaluate(rev, session: session, now: 2).verdicts
        #expect(refused.map(\.rule) == ["per-user"])
        guard case .deny(let reply)? = refused.first?.action else { Issue.record("not refused"); return }
        #expect(reply.code == 429)
        #expect(fleet.spends.map(\.bucket) == ["messages|user:alice", "messages|user:alice"])
        #expect(fleet.spends.allSatisfy { $0.rule == "per-user" && $0.rate == 30 && $0.burst == 30 && $0.cost == 1 && $0.onExceed == .deny })
        // With onExceed: delay, the fleet's wait is the message's delay.
        let delaying = try PolicyDocument(yaml: """
            rules: [{ name: held, action: { rateLimit: { perSecond: 30, key: global, scope: fleet } } }]
            """)
        let held = PolicyEngine(rules: delaying.rules, state: PolicyState(fleet: fleet, fleetSessions: fleet))
        fleet.answer = .wait(nanoseconds: 5_000)
        guard case .delay(let wait)? = held.evaluate(rev, session: session, now: 3).verdicts.first?.action else {
            Issue.record("not delayed")
            return
        }
        #expect(wait == 5_000)
        #expect(fleet.spends.last?.bucket == "messages|global" && fleet.spends.last?.onExceed == .delay)
    }

    @Test func aFleetMaxSessionsRuleIsLeftToTheFleetAndNamesItsCounts() throws {
        let fleet = RecordingFleet()
        let document = try PolicyDocument(yaml: Self.yaml)
        let policy = ConnectionPolicy(rules: document.connectionRules, state: PolicyState(fleet: fleet, fleetSessions: fleet))
        let facts = HandshakeFacts(clientIP: "10.0.0.1", user: "alice", database: "db", offeredSubprotocols: [], tls: false)
        for _ in 0..<3 { #expect(policy.admit(facts, now: 0) == .allow, "not counted locally") }
        let claims = policy.fleetSessionClaims(facts)
        #expect(claims.map(\.key) == ["user:alice"])
        #expect(claims.first?.limit == 2 && claims.first?.refusal.status == 503)
        let anonymous = HandshakeFacts(clientIP: "10.0.0.1", user: nil, database: "db", offeredSubprotocols: [], tls: false)
        #expect(policy.fleetSessionClaims(anonymous).isEmpty)
        // Without a fleet the rule counts locally, as scope local does.
        let local = ConnectionPolicy(rules: document.connectionRules)
        #expect(local.admit(facts, now: 0) == .allow)
        #expect(local.admit(facts, now: 0) == .allow)
        #expect(local.admit(facts, now: 0) != .allow)
        #expect(local.fleetSessionClaims(facts).isEmpty)
    }
}

/// A fleet that answers what the test sets and records what it was asked.
final class RecordingFleet: FleetRateLimiting, FleetSessionLimiting, Sendable {
    private let state = NIOLockedValueBox<(answer: FleetSpendResult, spends: [FleetSpend])>((.granted, []))
    var answer: FleetSpendResult {
        get { state.withLockedValue { $0.answer } }
        set { state.withLockedValue { $0.answer = newValue } }
    }
    var spends: [FleetSpend] { state.withLockedValue { $0.spends } }

    func spend(_ spend: FleetSpend, now: UInt64) -> FleetSpendResult {
        state.withLockedValue { state in
            state.spends.append(spend)
            return state.answer
        }
    }

    func open(_ claims: [FleetSessionClaim], session: UInt64) async -> ConnectionRefusal? { nil }
    func close(_ claims: [FleetSessionClaim], session: UInt64) {}
}
