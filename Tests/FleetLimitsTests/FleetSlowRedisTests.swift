import BLIPCore
import BLIPTestSupport
import FleetLimits
import Foundation
import Testing

/// A Redis that stops answering (SIGSTOP: its connections stay open, nothing comes back) is
/// noticed within the 250 ms command timeout: the relay falls back to local limits, handshakes
/// and messages are answered meanwhile, and once Redis runs again the limits are shared again.
@Suite(.timeLimit(.minutes(3))) struct FleetSlowRedisTests {
    static let policy = """
        rules:
          - name: per-user
            match: { from: client, profile: getCheckpoint }
            action: { rateLimit: { perSecond: 30, burst: 6, key: user, onExceed: deny, scope: fleet } }
        connections:
          rules:
            - name: two-devices
              maxSessions: { perUser: 2, scope: fleet }
        """

    @Test func aSilentRedisIsAFallbackNotAHang() async throws {
        try await RedisServerProcess.with { redis in
            try await FleetFixture.with(relays: 1, redisURL: redis.url, policy: Self.policy) { fleet in
                #expect(await fleet.waitForAll { $0.liveRelays == 1 && !$0.degraded })
                try await redis.pause()
                // The handshake's lease call times out: the session is admitted on the local share.
                let (connection, status) = try await fleet.connect(user: "alice", relay: 0)
                let client = try #require(connection, "refused: \(String(describing: status))")
                #expect(await fleet.waitForAll { $0.degraded })
                // Every request is answered from the local share (the first ones admitted from its
                // burst), none waits on the silent Redis.
                var answers: [Bool] = []
                for index in 0..<5 {
                    let request = BLIPMessage.request(profile: "getCheckpoint", properties: ["client": "slow-\(index)"])
                    let reply = try await FleetLoad.withReplyTimeout { try await client.request(request) }
                    answers.append(!(reply.type == .error && reply.properties["Error-Code"] == "429"))
                }
                #expect(answers == [true, true, true, true, true], "a burst of 6 at 30/s ÷ 1 relay")
                redis.resume()
                #expect(await fleet.waitForAll { !$0.degraded })
                let log = fleet.members[0].log
                #expect(log.count(containing: "fleet limits degraded") == 1, "\(log.all)")
                #expect(log.count(containing: "fleet limits shared again") == 1, "\(log.all)")
                try await client.close()
            }
        }
    }
}
