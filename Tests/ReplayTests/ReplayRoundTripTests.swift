import BLIPCore
import BLIPNIO
import NIOConcurrencyHelpers
import Foundation
import Gateway
import NIOCore
import NIOPosix
import Replay
import Replication
import Testing

/// A replication recorded through the capturing relay, then replayed over loopback: the client
/// side against a fresh gateway, and the server side to the embedded replicator.
@Suite(.serialized) struct ReplayRoundTripTests {
    @Test func clientReplayAgainstAFreshGatewayLeavesTheSameDocuments() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            #expect(recording.result.pushedRevisions == 2)
            #expect(recording.result.pulledRevisions == 3)
            #expect(sameDocuments(recording.gateway, recording.local))

            let fresh = try await RunningGateway.start(group: group, seed: ReplaySeeds.gateway)
            #expect(!sameDocuments(recording.gateway, fresh.database))
            let session = try CapturedSession.load(path: recording.capturePath, session: nil)
            let script = session.script(for: .client)
            #expect(script.requests.contains { $0.profile == "rev" })
            #expect(script.peerRequests.contains { $0.profile == "getAttachment" })
            let report = try await ReplayClient.run(script, target: fresh.url, configuration: ReplayConfiguration(), group: group)
            try await fresh.server.stop()

            #expect(report.matches, "\(report.textLines().joined(separator: "\n"))")
            #expect(report.requestsSent == script.requests.count)
            #expect(report.peerRequestsReceived == script.peerRequests.count)
            #expect(report.peerRequestsMatchedExactly == script.peerRequests.count)
            #expect(report.subprotocol == "BLIP_3+CBMobile_3")
            #expect(report.endedEarly == nil)
            // The pushed revisions and their attachment reached the fresh gateway as they reached the first.
            #expect(sameDocuments(recording.gateway, fresh.database))
            let digest = GatewayDatabase.attachmentDigest(of: Array(ReplaySeeds.attachmentText.utf8))
            #expect(fresh.database.hasAttachment(digest: digest))
        }
    }

    @Test func aDifferentGatewayShowsUpAsDisallowedDifferences() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            // This gateway already has the client's first document, with other content.
            let other = try await RunningGateway.start(group: group) { database in
                try ReplaySeeds.gateway(database)
                try database.put("local-1", body: ["from": .string("somebody else")])
            }
            let script = try CapturedSession.load(path: recording.capturePath, session: nil).script(for: .client)
            var configuration = ReplayConfiguration()
            configuration.stallTimeout = .seconds(5)
            let report = try await ReplayClient.run(script, target: other.url, configuration: configuration, group: group)
            try await other.server.stop()
            #expect(!report.matches)
            let differing = report.entries.filter { $0.disallowed > 0 }.map(\.profile)
            #expect(differing.contains("proposeChanges") || differing.contains("changes") || differing.contains("rev"),
                    "\(report.textLines().joined(separator: "\n"))")
        }
    }

    /// An empty gateway has nothing to push: the replay waits for the recorded changes and revs,
    /// gives up after the stall limit, and says what it was waiting for.
    @Test func aGatewayThatSendsLessEndsTheReplayWithTheReason() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            let empty = try await RunningGateway.start(group: group)
            let script = try CapturedSession.load(path: recording.capturePath, session: nil).script(for: .client)
            var configuration = ReplayConfiguration()
            // The stall limit also bounds each wait for the gateway's replies: long enough that
            // only the stall this test expects can end the replay on a loaded machine.
            configuration.stallTimeout = .seconds(5)
            let report = try await ReplayClient.run(script, target: empty.url, configuration: configuration, group: group)
            try await empty.server.stop()
            #expect(!report.matches)
            #expect(report.peerRequestsReceived < script.peerRequests.count)
            let reason = try #require(report.endedEarly)
            #expect(reason.hasPrefix("stalled"), "\(reason)")
            #expect(reason.contains("peer request"), "\(reason)")
        }
    }

    @Test func serverReplayServesTheReplicatorTheSameResult() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            let script = try CapturedSession.load(path: recording.capturePath, session: nil).script(for: .server)
            #expect(script.requests.contains { $0.profile == "rev" })
            let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)

            let local = GatewayDatabase(name: "local")
            try ReplaySeeds.local(local)
            let replicator = Replicator(
                configuration: ReplicatorConfiguration(url: "ws://127.0.0.1:\(server.port)/db", direction: .pushAndPull),
                database: local, group: group)
            let result = try await replicator.run()
            var reports = server.reports.makeAsyncIterator()
            let report = try #require(await reports.next())
            await server.stop()

            #expect(result.pulledRevisions == recording.result.pulledRevisions)
            #expect(result.pushedRevisions == recording.result.pushedRevisions)
            #expect(result.pulledAttachments == recording.result.pulledAttachments)
            #expect(result.conflicts.isEmpty && result.documentErrors.isEmpty)
            #expect(sameDocuments(recording.local, local))
            #expect(report.side == .server)
            #expect(report.matches, "\(report.textLines().joined(separator: "\n"))")
            #expect(report.requestsSent == script.requests.count)
            #expect(report.peerCloseCode == 1000)
            // The pushed revision with an attachment was answered after its getAttachment, as recorded.
            #expect(report.peerRepliesHeld >= 1)
        }
    }

    /// A client that never answers the replay's `getAttachment` never gets its `rev` answered
    /// either: the replay stalls and says that a reply is held.
    @Test func aStalledServedReplaySaysWhichRepliesItHolds() async throws {
        try await withLoopback { group in
            var configuration = ReplayConfiguration()
            // The client's requests must reach the replay within the stall limit: long enough
            // that only the stall this test expects can end it on a loaded machine.
            configuration.stallTimeout = .seconds(5)
            let server = try await ReplayServer.start(PeerReplyGateTests.pushWithAttachment(), configuration: configuration, group: group)
            var client = BLIPWebSocketClient.Configuration()
            client.port = server.port
            client.subprotocols = ["BLIP_3+CBMobile_3"]
            client.onRequest = { _, _ in }  // getAttachment stays unanswered
            let connection = try #require(try await BLIPWebSocketClient.connect(client, group: group).connection)
            _ = try await connection.request(.request(profile: "proposeChanges", body: ByteBuffer(string: "[]")))
            let rev = try await connection.send(.request(profile: "rev", properties: ["id": "doc", "rev": "1-a"],
                                                         body: ByteBuffer(string: "{}")))
            var reports = server.reports.makeAsyncIterator()
            let report = try #require(await reports.next())
            await server.stop()

            #expect(!report.matches)
            let reason = try #require(report.endedEarly)
            #expect(reason.hasPrefix("stalled after the last request: 1 repl(ies) outstanding"), "\(reason)")
            #expect(reason.hasSuffix("1 repl(ies) to the peer held for own requests, as recorded"), "\(reason)")
            #expect(report.peerRepliesHeld == 1)
            // The rev was never answered: the connection ended first.
            await #expect(throws: (any Error).self) { try await rev.get() }
        }
    }

    /// A client that closes as soon as its pushed `rev` is answered still gets the replay's
    /// `getAttachment` first, because the recorded gateway asked before it answered.
    @Test func aServedReplayAsksForTheAttachmentBeforeItAnswersThePushedRev() async throws {
        try await withLoopback { group in
            let script = PeerReplyGateTests.pushWithAttachment()
            let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
            let order = NIOLockedValueBox<[String]>([])
            var client = BLIPWebSocketClient.Configuration()
            client.port = server.port
            client.subprotocols = ["BLIP_3+CBMobile_3"]
            client.onRequest = { request, handler in
                order.withLockedValue { $0.append("asked \(request.profile ?? "?")") }
                handler.sendReply(.reply(to: request))
            }
            let connection = try #require(try await BLIPWebSocketClient.connect(client, group: group).connection)
            let proposed = try await connection.request(.request(profile: "proposeChanges", body: ByteBuffer(string: "[]")))
            #expect(proposed.type == .response)
            // The rev's reply is noted on the event loop as it arrives, in order with the requests.
            let pushed = BLIPMessage.request(profile: "rev", properties: ["id": "doc", "rev": "1-a"], body: ByteBuffer(string: "{}"))
            let rev = try await connection.onLoop { handler in
                handler.sendRequest(pushed).map { reply in
                    order.withLockedValue { $0.append("rev answered") }
                    return reply
                }
            }.get()
            #expect(rev.type == .response)
            _ = try await connection.request(.request(profile: "setCheckpoint"))
            try await connection.close()
            var reports = server.reports.makeAsyncIterator()
            let report = try #require(await reports.next())
            await server.stop()

            #expect(order.withLockedValue { $0 } == ["asked getAttachment", "rev answered"])
            #expect(report.matches, "\(report.textLines().joined(separator: "\n"))")
            #expect(report.peerRepliesHeld == 1)
            #expect(report.textLines().contains("peer replies held for own requests, as recorded: 1"))
        }
    }
}
