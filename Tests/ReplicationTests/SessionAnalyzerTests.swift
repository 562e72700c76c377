import BLIPCore
import Testing
@testable import Replication

@Suite("Session analyzer: pairing, timelines, checkpoints, collections")
struct SessionAnalyzerTests {
    @Test("a reply is paired with its request and timed")
    func pairing() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        let answer = script.server(reply(1, [("rev", "0-1")], body: "{}"), after: 0.25)
        #expect(answer.latency == 0.25)
        #expect(answer.summary == "getCheckpoint client=cp → rev 0-1")
        let stats = script.analyzer.summary().profiles.first { $0.profile == "getCheckpoint" }
        #expect(stats?.requests == 1 && stats?.replies == 1 && stats?.latencyMax == 0.25)
    }

    @Test("a push through proposeChanges: 304 not wanted, 409 refused, the rest sent and accepted")
    func pushTimeline() {
        let script = Script()
        script.client(request("proposeChanges", 1, body: "[[\"a\",\"\(revA2)\",\"\(revA1)\"],[\"b\",\"\(revA1)\"],[\"c\",\"\(revA1)\"]]"))
        let answer = script.server(reply(1, body: "[0,304,409]"))
        #expect(answer.summary == "proposeChanges 3 → 1×send 1×304 1×409")
        script.client(request("rev", 2, [("id", "a"), ("rev", revA2), ("history", revA1)], body: "{\"v\":2}"))
        script.server(reply(2))
        #expect(script.analyzer.timeline(docID: "a").map(\.kind) == [.proposed, .wanted, .revSent, .revAccepted])
        #expect(script.analyzer.timeline(docID: "b").map(\.kind) == [.proposed, .notWanted])
        #expect(script.analyzer.timeline(docID: "c").last?.summary == "1-0000… refused in proposeChanges reply #1: 409: conflict, resolve and retry")
        let summary = script.analyzer.summary()
        #expect(summary.replicationType == "push")
        #expect(summary.pushed.revisionsAccepted == 1 && summary.pushed.revisionsRefused == 1 && summary.conflicts == 1)
    }

    @Test("attachments asked for and proven show on the document that named them")
    func attachments() {
        let script = Script()
        script.client(request("rev", 1, [("id", "photo-doc"), ("rev", revA1)],
                              body: #"{"_attachments":{"p":{"digest":"sha1-PHOTO","length":5}}}"#))
        script.server(request("getAttachment", 1, [("digest", "sha1-PHOTO")]))
        script.client(reply(1, body: "12345"))
        script.server(request("proveAttachment", 2, [("digest", "sha1-PHOTO")], body: String(repeating: "n", count: 20)))
        script.client(reply(2, body: "sha1-proof"))
        script.server(reply(1))
        #expect(script.analyzer.timeline(docID: "photo-doc").map(\.kind)
            == [.revSent, .attachmentRequested, .attachmentSent, .attachmentProofRequested, .attachmentProven, .revAccepted])
        #expect(script.analyzer.summary().pushed.attachmentBytes == 5)
    }

    @Test("setCheckpoint shows the body diff and the MVCC revs")
    func checkpointDiff() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "cp")]))
        script.server(reply(1, [("rev", "7-a")], body: #"{"remote":100,"local":5}"#))
        script.client(request("setCheckpoint", 2, [("client", "cp"), ("rev", "7-a")], body: #"{"remote":112,"local":5}"#))
        script.server(reply(2, [("rev", "8-b")]))
        let history = script.analyzer.checkpointHistory
        #expect(history.map(\.summary) == ["getCheckpoint client=cp → rev 7-a",
                                           "setCheckpoint client=cp rev 7-a → 8-b [remote: 100→112]"])
    }

    @Test("two live sessions using one checkpoint client ID are reported; a closed one is forgotten")
    func sharedCheckpoint() {
        let registry = CheckpointRegistry()
        let first = Script(connection: 1, registry: registry)
        let second = Script(connection: 2, registry: registry)
        first.client(request("getCheckpoint", 1, [("client", "cp-shared")]))
        let clash = second.client(request("getCheckpoint", 1, [("client", "cp-shared")]))
        #expect(clash.findings.map(\.kind) == [.sharedCheckpointClient])
        #expect(registry.sharedClients == ["cp-shared": [1, 2]])
        first.analyzer.observeClose(from: .clientToServer, code: 1000, reason: "", at: 1)
        #expect(registry.sharedClients.isEmpty)
    }

    @Test("getCollections first makes the connection collection-aware; a message without collection is mixing")
    func collectionAware() {
        let script = Script()
        script.client(request("getCollections", 1, body: #"{"collections":["inv.hotels"],"checkpoint_ids":["c1"]}"#))
        script.server(reply(1, body: "[{}]"))
        let good = script.client(request("subChanges", 2, [("collection", "0")]))
        #expect(good.findings.isEmpty && good.summary == "[inv.hotels] subChanges since=start one-shot")
        #expect(script.server(reply(2)).summary == "[inv.hotels] subChanges since=start one-shot → ok")
        let mixed = script.client(request("getCheckpoint", 3, [("client", "c1")]))
        #expect(mixed.findings.map(\.kind) == [.mixedCollectionModes])
        #expect(script.analyzer.summary().collectionMode == "collectionAware")
    }

    @Test("getCheckpoint first makes it legacy; a collection property then is mixing")
    func legacy() {
        let script = Script()
        script.client(request("getCheckpoint", 1, [("client", "c")]))
        let mixed = script.client(request("changes", 2, [("collection", "0")], body: "[]"))
        #expect(mixed.findings.map(\.kind) == [.mixedCollectionModes])
        #expect(mixed.findings[0].description.contains("protocol violation by client"))
    }

    @Test("timelines are evicted by count and by age")
    func eviction() {
        var limits = AnalyzerLimits()
        limits.maxTimelineDocuments = 3
        limits.timelineMaxAge = 100
        let script = Script(limits: limits)
        for index in 0..<5 { script.server(request("rev", MessageNumber(index + 1), [("id", "d\(index)"), ("rev", revA1)], body: "{}")) }
        #expect(script.analyzer.timelineDocumentIDs == ["d2", "d3", "d4"])
        script.server(request("rev", 6, [("id", "d4"), ("rev", revA2)], body: "{}"), after: 500)
        #expect(script.analyzer.timelineDocumentIDs == ["d4"])
        #expect(script.analyzer.summary().timelineDocumentsEvicted == 4)
    }

    @Test("the summary is JSON with self-explaining keys")
    func summaryJSON() throws {
        let script = Script()
        script.analyzer.observeHandshake(subprotocol: "BLIP_3+CBMobile_3", user: "alice", at: 0)
        script.client(request("subChanges", 1, [("continuous", "true")]))
        let json = ReplicationJSON.encode(script.analyzer.summary())
        for key in ["\"user\":\"alice\"", "\"replicationType\":\"pull\"", "\"continuous\":true", "\"pulled\":{", "\"tombstones\":0",
                    "\"errorsByDomainAndCode\":{}", "\"caughtUp\":false"] {
            #expect(json.contains(key), "\(json)")
        }
    }
}
