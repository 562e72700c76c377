import BLIPCore
import Foundation
import Gateway
import NIOCore
import Replay
import Testing

/// Credentials in both roles: new ones replace what the capture held (the relay redacts it),
/// and a served replay challenges like Sync Gateway when the recorded client authenticated.
@Suite(.serialized) struct ReplayCredentialsTests {
    @Test func clientReplayNeedsAndUsesNewCredentials() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            let script = try CapturedSession.load(path: recording.capturePath, session: nil).script(for: .client)
            let guarded = try await RunningGateway.start(group: group, users: ["alice": "secret"], seed: ReplaySeeds.gateway)

            let refusal = await #expect(throws: ReplayError.self) {
                _ = try await ReplayClient.run(script, target: guarded.url, configuration: ReplayConfiguration(), group: group)
            }
            #expect(refusal?.description.contains("HTTP 401") == true)

            var configuration = ReplayConfiguration()
            configuration.substitutions.setCredentials(user: "alice", password: "secret")
            configuration.substitutions.clientID = "replayed-by-alice"
            let report = try await ReplayClient.run(script, target: guarded.url, configuration: configuration, group: group)
            try await guarded.server.stop()
            #expect(report.matches, "\(report.textLines().joined(separator: "\n"))")
            #expect(sameDocuments(recording.gateway, guarded.database))
        }
    }

    @Test func servedReplayChallengesWhenTheRecordedClientAuthenticated() async throws {
        try await withLoopback { group in
            let recording = try await RecordedReplication.record(group: group)
            defer { recording.remove() }
            var script = try CapturedSession.load(path: recording.capturePath, session: nil).script(for: .server)
            script.handshake.requestHeaders.append((name: "Authorization", value: "Basic <redacted>"))
            let server = try await ReplayServer.start(script, configuration: ReplayConfiguration(), group: group)
            let url = "ws://127.0.0.1:\(server.port)/db"

            let anonymous = Replicator(configuration: ReplicatorConfiguration(url: url, direction: .pushAndPull),
                                       database: GatewayDatabase(name: "anonymous"), group: group)
            let refusal = await #expect(throws: GatewayError.self) { _ = try await anonymous.run() }
            #expect(refusal?.status == 401)

            var configuration = ReplicatorConfiguration(url: url, direction: .pushAndPull)
            configuration.username = "anyone"
            configuration.password = "anything"
            let local = GatewayDatabase(name: "local")
            try ReplaySeeds.local(local)
            let result = try await Replicator(configuration: configuration, database: local, group: group).run()
            var reports = server.reports.makeAsyncIterator()
            let report = try #require(await reports.next())
            await server.stop()
            #expect(result.pulledRevisions == recording.result.pulledRevisions)
            #expect(sameDocuments(recording.local, local))
            #expect(report.matches, "\(report.textLines().joined(separator: "\n"))")
        }
    }
}
