import BLIPCore
import Foundation
import ReplicationNames
import NIOCore
import Policy

/// `blipscope-bench policy`: nanoseconds per ``PolicyEngine/evaluate(_:session:now:)`` for
/// messages that match none of the loaded rules — the cost every relayed message pays once a
/// policy is loaded (GitHub issue 7 budgets it at 10 % of relay CPU per message on workload A).
struct PolicyBenchmark {
    let evaluations: Int
    let rounds: Int
    var ruleCount = 20
    /// Run only the scenarios whose name contains this text.
    var only: String?

    struct Scenario {
        let name: String
        let yaml: String
    }

    /// Rules on profiles and sides the traffic never has: rejected on `from`/`profile`.
    func otherProfiles() -> String {
        let profiles = [ReplicationProfile.getAttachment.rawValue, ReplicationProfile.proveAttachment.rawValue, ReplicationProfile.setCheckpoint.rawValue, ReplicationProfile.getCheckpoint.rawValue, ReplicationProfile.subChanges.rawValue, ReplicationProfile.norev.rawValue,
                        ReplicationProfile.putRev.rawValue, ReplicationProfile.getRev.rawValue, ReplicationProfile.getCollections.rawValue, ReplicationProfile.unsubChanges.rawValue]
        return "rules:\n" + (0..<ruleCount).map { index in
            let profile = profiles[index % profiles.count]
            let side = index % 2 == 0 ? "client" : "server"
            return "  - { name: r\(index), match: { from: \(side), profile: \(profile), doc: \"draft-\(index)-*\" }, action: { deny: {} } }"
        }.joined(separator: "\n")
    }

    /// Rules on the traffic's own profile that fail on later keys (doc globs and regexes, user,
    /// client IP, properties): every rule reads properties before it says no.
    func sameProfile(regex: Bool) -> String {
        "rules:\n" + (0..<ruleCount).map { index in
            let match: String
            switch index % 5 {
            case 0: match = "doc: \"draft-\(index)-*\""
            case 1: match = regex ? "doc: \"re:^secret-\(index)$\"" : "doc: \"secret-*-\(index)\""
            case 2: match = "user: \"bob-\(index)\""
            case 3: match = "clientIP: 203.0.\(index).0/24"
            default: match = "properties: { deleted: \"true\" }"
            }
            return "  - { name: r\(index), match: { profile: rev, \(match) }, action: { deny: {} } }"
        }.joined(separator: "\n")
    }

    func run() throws {
        let session = SessionFacts(id: 1, user: "alice", clientIP: "10.0.0.7", database: "db", subprotocol: "BLIP_3+CBMobile_3")
        // Properties as the relay has them: a decoded block read on demand.
        var encoded = ByteBuffer()
        Properties([.profile: ReplicationProfile.rev.rawValue, .id: "doc-000123", .rev: "2-a1b2c3", .sequence: "123"]).encode(into: &encoded)
        let request = MessageFacts(direction: .clientToServer, type: .request, number: 1,
                                   properties: try Properties.decode(from: &encoded))
        let reply = MessageFacts(direction: .serverToClient, type: .response, number: 1, properties: Properties())
        print(BenchMachine.current().line)
        print("policy benchmark: \(evaluations) evaluations per round, best of \(rounds), \(ruleCount) rules, none matching")
        print("scenario".padded(to: 44), "request ns".padded(to: 11), "reply ns")
        let scenarios = [
            Scenario(name: "no rules", yaml: "rules: []"),
            Scenario(name: "other profiles/sides (cheap keys say no)", yaml: otherProfiles()),
            Scenario(name: "same profile, later keys say no", yaml: sameProfile(regex: true)),
            Scenario(name: "same, globs instead of regexes", yaml: sameProfile(regex: false)),
        ]
        for scenario in scenarios where only.map({ scenario.name.contains($0) }) ?? true {
            let engine = PolicyEngine(rules: try PolicyDocument(yaml: scenario.yaml).rules)
            let requestNs = measure(engine, request, session)
            let replyNs = measure(engine, reply, session)
            print(scenario.name.padded(to: 44), String(format: "%.1f", requestNs).padded(to: 11), String(format: "%.1f", replyNs))
        }
    }

    private func measure(_ engine: PolicyEngine, _ message: MessageFacts, _ session: SessionFacts) -> Double {
        var best = Double.infinity
        var verdicts = 0
        for _ in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<evaluations {
                verdicts &+= engine.evaluate(message, session: session, now: UInt64(index)).verdicts.count
            }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(evaluations))
        }
        precondition(verdicts == 0, "a rule matched: the benchmark's messages must match none")
        return best
    }

}
