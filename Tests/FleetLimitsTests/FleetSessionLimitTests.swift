import BLIPTestSupport
import FleetLimits
import Foundation
import NIOHTTP1
import RedisClient
import Testing

/// `maxSessions` with `scope: fleet` across two relays: a user's third device is refused with
/// the rule's status wherever it lands, another user is not, and a closed session makes room.
@Suite(.timeLimit(.minutes(3))) struct FleetSessionLimitTests {
    static let policy = """
        connections:
          rules:
            - name: two-devices
              maxSessions: { perUser: 2, status: 503, retryAfter: 2s, scope: fleet }
        """

    @Test func aUsersThirdSessionIsRefusedOnEitherRelay() async throws {
        try await RedisServerProcess.with { redis in
            try await FleetFixture.with(relays: 2, redisURL: redis.url, policy: Self.policy) { fleet in
                #expect(await fleet.waitForAll { $0.liveRelays == 2 && !$0.degraded })
                let (first, _) = try await fleet.connect(user: "alice", relay: 0)
                let (second, _) = try await fleet.connect(user: "alice", relay: 1)
                #expect(first != nil && second != nil)
                for relay in 0..<2 {
                    let (third, status) = try await fleet.connect(user: "alice", relay: relay)
                    #expect(third == nil)
                    #expect(status == .serviceUnavailable, "relay \(relay)")
                }
                let (bob, _) = try await fleet.connect(user: "bob", relay: 0)
                #expect(bob != nil, "another user's count")

                // One of alice's devices leaves: its lease is given back and a new one gets in.
                try await first?.close()
                let checker = try RedisClient(configuration: RedisConfiguration(url: redis.url))
                checker.start()
                try await checker.waitForConnection(within: .seconds(30))
                let deadline = ContinuousClock.now + .seconds(30)
                var live: Int64? = 2
                while live != 1, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))  // bounded wait for the relay's release
                    live = try await checker.send(RESPCommand("ZCARD", "blipscope:sessions:two-devices:user:alice")).integer
                }
                await checker.shutdown()
                #expect(live == 1)
                let (again, status) = try await fleet.connect(user: "alice", relay: 1)
                #expect(again != nil, "\(String(describing: status))")
                try await second?.close()
                try await again?.close()
                try await bob?.close()
            }
        }
    }
}
