import BLIPCore
import Mediation
import NIOCore
import Policy
import ReplicationNames
import Testing
@testable import MediationRules

/// A policy file's rules as the mediator asks them: the fate of each message in the decision,
/// and what the policy decided beside it (dry runs, a close, held ACKs) handed back with it,
/// typed, with no call back into the session.
@Suite struct PolicyMediationTests {
    static func mediation(_ yaml: String, dryRun: Bool = false) throws -> PolicyMediation {
        let store = PolicyStore(document: try PolicyDocument(yaml: yaml), dryRun: dryRun)
        return PolicyMediation(store: store, session: SessionFacts(id: 7, user: "alice", clientIP: "127.0.0.1"),
                               clock: { 1_000_000_000 })
    }

    static func head(_ profile: ReplicationProfile, number: MessageNumber = 1) -> MediatedHead {
        MediatedHead(direction: .clientToServer, number: number, type: .request, flags: FrameFlags(type: .request),
                     properties: Properties([(PropertyName.profile.rawValue, profile.rawValue)]))
    }

    @Test func aDeniedRequestIsDeniedAtItsHeadWithTheRulesKindAndNothingAside() throws {
        let policy = try Self.mediation("""
            rules:
              - name: no-revs
                match: { from: client, profile: rev }
                action: { deny: { code: 403 } }
            """)
        let decision = policy.decide(head: Self.head(.rev))
        guard case .deny(let reply) = decision.action else { Issue.record("not denied: \(decision.action)"); return }
        #expect(reply.code == 403)
        #expect(decision.rule == "no-revs" && decision.ruling.kind == .deny)
        #expect(decision.asides.isEmpty)
        #expect(policy.decide(head: Self.head(.changes, number: 2)).asides.isEmpty, "nothing carried over")
    }

    @Test func aDryRunIsReportedBesideAPassingMessageAndOnlyOnce() throws {
        let policy = try Self.mediation("""
            rules:
              - name: would-deny
                match: { profile: rev }
                action: { deny: { code: 403 } }
            """, dryRun: true)
        let decision = policy.decide(head: Self.head(.rev, number: 5))
        guard case .pass = decision.action else { Issue.record("a dry run changed the message"); return }
        let report = try #require(decision.asides.reports.first)
        #expect(decision.asides.reports.count == 1)
        #expect(report.dryRun && report.kind == .deny && report.rule == "would-deny")
        #expect(report.number == 5 && report.profile == ReplicationProfile.rev.rawValue)
        #expect(report.action.hasPrefix("dry-run"))
        #expect(decision.asides.close == nil)
        #expect(policy.decide(head: Self.head(.changes, number: 6)).asides.isEmpty, "each decision hands back its own")
    }

    @Test func aCloseIsAskedForWithTheDecisionThatTriggersIt() throws {
        let policy = try Self.mediation("""
            rules:
              - name: cut
                match: { profile: changes }
                action: { close: { code: 1011, reason: "injected" } }
            """)
        let decision = policy.decide(head: Self.head(.changes))
        guard case .drop = decision.action else { Issue.record("a close that does not forward drops: \(decision.action)"); return }
        #expect(decision.asides.close == SessionCloseRequest(code: 1011, reason: "injected"))
        #expect(decision.asides.reports.map(\.kind) == [.fault])
        #expect(decision.asides.reports.first?.dryRun == false)
    }

    @Test func heldAcksAreReportedOnceAndTheirHoldIsAnsweredLater() throws {
        let policy = try Self.mediation("""
            rules:
              - name: sticky-acks
                match: { from: server, profile: rev }
                action: { withholdAcks: 2s }
            """)
        var head = Self.head(.rev)
        head.direction = .serverToClient
        let decision = policy.decide(head: head)
        guard case .pass = decision.action else { Issue.record("the message itself passes"); return }
        #expect(decision.asides.reports.map(\.rule) == ["sticky-acks"])
        let hold = policy.holdAck(AckInfo(type: .ackRequest, number: 1, bytes: 65_536), travelling: .clientToServer)
        #expect(hold == .seconds(2), "the clock stands still: the whole hold is left")
    }
}
