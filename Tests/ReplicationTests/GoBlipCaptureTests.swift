import BLIPCore
import Testing
@testable import Replication

/// The go-blip capture: a getCheckpoint, an ERR, then a pull (subChanges, changes of 4 and 1,
/// five revs, a final empty changes) between two peers nobody in this project wrote.
@Suite("go-blip capture")
struct GoBlipCaptureTests {
    @Test("the pull reads as a replication: changes, wants, revs, caught up")
    func pullStory() throws {
        let analyzer = SessionAnalyzer(connection: 0)
        let analyzed = try CaptureFixture.load().replay(into: analyzer)
        let lines = analyzed.map(\.summary)
        #expect(lines.contains("getCheckpoint client=peer-client"))
        #expect(lines.contains("getCheckpoint client=peer-client → rev 0-1"))
        #expect(lines.contains("fail (1 B) → ERR HTTP 404: requested failure"))
        #expect(lines.contains("subChanges since=start one-shot batch=4"))
        #expect(lines.contains("changes 4 revs seq 1…4"))
        #expect(lines.contains("changes 4 revs seq 1…4 → wants 4"))
        #expect(lines.contains("changes 1 revs seq 5 → wants 1"))
        #expect(lines.contains("rev doc-0001 1-0000… (58 B)"))
        #expect(lines.contains("rev doc-0000 1-0000… (100.1 KB)"))
        #expect(lines.contains("changes 0 revs (caught up)"))
        #expect(analyzer.findings.isEmpty, "\(analyzer.findings)")
        #expect(analyzer.stuckFindings(now: .infinity).isEmpty)
    }

    @Test("the summary counts the pulled documents and the 404")
    func summary() throws {
        let analyzer = SessionAnalyzer(connection: 0)
        try CaptureFixture.load().replay(into: analyzer)
        let summary = analyzer.summary()
        #expect(summary.replicationType == "pull")
        #expect(summary.continuous == false)
        #expect(summary.subprotocol == "BLIP_3+CBMobile_3")
        #expect(summary.collectionMode == "legacy")
        #expect(summary.pulled.changesMessages == 3)
        #expect(summary.pulled.revisionsOffered == 5)
        #expect(summary.pulled.revisionsWanted == 5)
        #expect(summary.pulled.revisionsSent == 5)
        #expect(summary.pulled.revisionsAccepted == 5)
        #expect(summary.pulled.documents == 5)
        #expect(summary.pushed.revisionsSent == 0)
        #expect(summary.errorsByDomainAndCode == ["HTTP 404": 1])
        #expect(summary.caughtUp)
        #expect(summary.messagesFromClient == 25)
        #expect(summary.messagesFromServer == 23)
        #expect(summary.closes.map(\.code) == [1000, 1000])
        let changes = try #require(summary.profiles.first { $0.profile == "changes" })
        #expect(changes.requests == 3 && changes.replies == 3)
    }

    @Test("a pulled document's timeline: offered, wanted, sent, accepted")
    func timeline() throws {
        let analyzer = SessionAnalyzer(connection: 7)
        try CaptureFixture.load().replay(into: analyzer)
        let events = analyzer.timeline(docID: "doc-0004")
        #expect(events.map(\.kind) == [.offered, .wanted, .revSent, .revAccepted])
        #expect(events.map(\.from) == [.serverToClient, .clientToServer, .serverToClient, .clientToServer])
        #expect(events.allSatisfy { $0.connection == 7 })
        #expect(events[0].summary == "offered in changes #6 (rev 1-0000…, seq 5)")
        let json = ReplicationJSON.encode(events[2])
        for key in ["\"conn\":7", "\"from\":\"server\"", "\"type\":\"MSG\"", "\"number\":7", "\"profile\":\"rev\"", "\"summary\":"] {
            #expect(json.contains(key), "\(json)")
        }
    }
}
