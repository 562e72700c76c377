import BLIPCore
import Foundation
import Testing
@testable import Policy

@Suite("Policy store: load and reload")
struct PolicyStoreTests {
    static let alice = SessionFacts(id: 1, user: "alice", clientIP: "10.0.0.1")
    static let rev = MessageFacts(direction: .serverToClient, type: .request, properties: ["Profile": "rev", "id": "d"])

    final class TempFile {
        let path = NSTemporaryDirectory() + "policy-\(UUID().uuidString).yaml"
        func write(_ text: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let limited = "rules: [{ name: slow, match: { profile: rev }, action: { rateLimit: { perSecond: 1, burst: 2, onExceed: deny } } }]"

    func denied(_ store: PolicyStore, now: UInt64 = 0) -> Bool {
        !store.engine.evaluate(Self.rev, session: Self.alice, now: now).verdicts.isEmpty
    }

    @Test("a broken new version is rejected with its reason and the old policy stays in force")
    func brokenReloadKeepsOld() throws {
        let file = TempFile()
        try file.write(PolicyDocumentTests.issueExample)
        let store = try PolicyStore(path: file.path)
        #expect(store.ruleCount == 2)
        try file.write("rules: [{ name: slow-revs, action: { rateLimit: { perSecond: 0 } } }]")
        do {
            _ = try store.reloadIfChanged()
            Issue.record("accepted a broken policy")
        } catch {
            #expect(error.description == "rule \"slow-revs\": action.rateLimit.perSecond: must be a positive number")
        }
        #expect(store.ruleCount == 2)
        #expect(store.engine.rules.map(\.name) == ["no-drafts", "slow-revs"])
        #expect(try store.reloadIfChanged() == nil, "the same broken bytes are not reported again")
        try file.write("rules: []\nconnections: { rules: [{ name: tls, requireTLS: true }] }")
        #expect(try store.reloadIfChanged() == 1)
        #expect(store.engine.rules.isEmpty && store.connections.rules.count == 1)
        try FileManager.default.removeItem(atPath: file.path)
        #expect(throws: PolicyError.self) { try store.reloadIfChanged() }
        #expect(try store.reloadIfChanged() == nil, "a missing file is reported once")
        #expect(store.connections.rules.count == 1)
        try file.write("rules: []")
        #expect(try store.reloadIfChanged() == 0)
    }

    @Test("bucket state survives a reload for a rule whose name is unchanged, and is dropped for a removed one")
    func stateSurvivesReload() throws {
        let file = TempFile()
        try file.write(Self.limited)
        let store = try PolicyStore(path: file.path)
        #expect(!denied(store) && !denied(store))
        #expect(denied(store), "burst of 2 spent")
        try file.write(Self.limited + "\n# comment changes the bytes")
        #expect(try store.reload() == 1)
        #expect(denied(store), "the reloaded rule kept its empty bucket")
        try file.write("rules: [{ name: other, match: { profile: norev }, action: { deny: {} } }]")
        try store.reload()
        #expect(store.state.bucket(.init(rule: "slow", value: "messages|session:1")) == nil)
        try file.write(Self.limited)
        try store.reload()
        #expect(!denied(store), "a rule that comes back starts with a full bucket")
    }

    @Test("open-session counts survive a reload")
    func sessionCountsSurvive() throws {
        let store = PolicyStore(document: try PolicyDocument(yaml: "connections: { rules: [{ name: cap, maxSessions: { total: 1 } }] }"))
        let facts = HandshakeFacts(clientIP: "10.0.0.1", user: nil, database: "db", offeredSubprotocols: [], tls: false)
        #expect(store.connections.admit(facts, now: 0) == .allow)
        store.replace(with: try PolicyDocument(yaml: "connections: { rules: [{ name: cap, maxSessions: { total: 1, status: 429 } }] }"))
        #expect(store.connections.admit(facts, now: 0).admits == false)
        store.connections.sessionClosed(facts)
        #expect(store.connections.admit(facts, now: 0) == .allow)
    }

    @Test("a missing file fails the first load")
    func missingFile() {
        #expect(throws: PolicyError.self) { try PolicyStore(path: "/nonexistent/policy.yaml") }
    }
}
