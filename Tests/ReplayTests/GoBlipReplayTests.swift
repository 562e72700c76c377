import BLIPCore
import Foundation
import NIOCore
import Replay
import Testing

/// The go-blip reference capture (shared vectors) is an echo test session between two go-blip
/// peers, not a replication: nothing in this project answers `echo`, `fail` or its changes the
/// way those peers did. So both of its sides are replayed against each other: the server role
/// listens, the client role dials it. Every frame then goes through our encoder and decoder
/// again (compressed and urgent messages, NoReply, the two 1 MiB messages that need ACK flow
/// control), and every reply must come back as recorded.
@Suite struct GoBlipReplayTests {
    static func script(_ side: ReplaySide) throws -> ReplayScript {
        let path = try #require(Bundle.module.path(forResource: "goblip-session", ofType: "pcap", inDirectory: "Fixtures"))
        return try CapturedSession.load(path: path, session: nil).script(for: side)
    }

    @Test func bothSidesReplayAgainstEachOtherWithoutProtocolErrors() async throws {
        let serverScript = try Self.script(.server)
        let clientScript = try Self.script(.client)
        try await withLoopback { group in
            let server = try await ReplayServer.start(serverScript, configuration: ReplayConfiguration(), group: group)
            let client = try await ReplayClient.run(clientScript, target: "ws://127.0.0.1:\(server.port)/db",
                                                    configuration: ReplayConfiguration(), group: group)
            var reports = server.reports.makeAsyncIterator()
            let served = try #require(await reports.next())
            await server.stop()

            #expect(client.matches, "\(client.textLines().joined(separator: "\n"))")
            #expect(client.requestsSent == 17)
            #expect(client.entries.allSatisfy { $0.differences.isEmpty })
            #expect(client.entries.filter { $0.newStatus == "ERR HTTP/404" }.map(\.profile) == ["fail"])
            #expect(client.peerRequestsReceived == 8 && client.peerRequestsMatchedExactly == 8)
            #expect(client.peerCloseCode == 1000)
            #expect(served.matches, "\(served.textLines().joined(separator: "\n"))")
            #expect(served.requestsSent == 8)
            #expect(served.peerRequestsReceived == 17 && served.peerRequestsMatchedExactly == 17)
            #expect(served.peerCloseCode == 1000)
        }
    }

    /// Recorded gaps at a hundredfold speed: requests go out on the clock, not after the replies
    /// they followed, and still every reply comes back as recorded.
    @Test func recordedTimingAtAHundredfoldSpeedStillMatches() async throws {
        let serverScript = try Self.script(.server)
        let clientScript = try Self.script(.client)
        try await withLoopback { group in
            let server = try await ReplayServer.start(serverScript, configuration: ReplayConfiguration(), group: group)
            var configuration = ReplayConfiguration()
            configuration.timing = .recorded(speed: 100)
            let client = try await ReplayClient.run(clientScript, target: "ws://127.0.0.1:\(server.port)/db",
                                                    configuration: configuration, group: group)
            await server.stop()
            #expect(client.timing == "x100.0")
            #expect(client.matches, "\(client.textLines().joined(separator: "\n"))")
            #expect(client.requestsSent == 17)
        }
    }

    /// The same, with one recorded echo reply changed on the serving side: the client's report
    /// must show exactly that body path.
    @Test func aChangedReplyIsReportedAtItsPath() async throws {
        var serverScript = try Self.script(.server)
        let clientScript = try Self.script(.client)
        let echo = try #require(serverScript.peerRequests.firstIndex {
            $0.profile == "echo" && $0.recordedReply.map { JSONValueProbe.isObject($0.body) } == true
        })
        var reply = try #require(serverScript.peerRequests[echo].recordedReply)
        reply.body = ByteBuffer(string: #"{"replayed":true}"#)
        serverScript.peerRequests[echo].recordedReply = reply
        let modified = serverScript
        try await withLoopback { group in
            let server = try await ReplayServer.start(modified, configuration: ReplayConfiguration(), group: group)
            let client = try await ReplayClient.run(clientScript, target: "ws://127.0.0.1:\(server.port)/db",
                                                    configuration: ReplayConfiguration(), group: group)
            await server.stop()
            #expect(!client.matches)
            let differing = client.entries.filter { !$0.differences.isEmpty }
            #expect(differing.count == 1)
            #expect(differing.first?.profile == "echo")
            #expect(differing.first?.differences.contains { $0.path == "body.replayed" && $0.old == nil && $0.new == "true" } == true)
        }
    }
}

/// Whether a body is a JSON object, without depending on its members.
enum JSONValueProbe {
    static func isObject(_ body: ByteBuffer) -> Bool { body.readableBytesView.first == UInt8(ascii: "{") }
}
