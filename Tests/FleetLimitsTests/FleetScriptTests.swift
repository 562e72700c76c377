import BLIPTestSupport
@testable import FleetLimits
import NIOCore
import RedisClient
import Testing

/// The fleet's Lua scripts in a real redis-server (started and stopped by each test): grants
/// and returns of the token bucket, its time to live, the live relays, session leases.
@Suite(.timeLimit(.minutes(3))) struct FleetScriptTests {
    static func withRedis(_ body: @Sendable (RedisServerProcess, RedisClient) async throws -> Void) async throws {
        try await RedisServerProcess.with { server in
            let client = try RedisClient(configuration: RedisConfiguration(url: server.url))
            client.start()
            do {
                try await client.waitForConnection(within: .seconds(30))
                try await body(server, client)
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }
    }

    static func draw(_ redis: RedisClient, key: String = "bucket", rate: Double, burst: Double, want: Int,
                     giveBack: Int = 0) async throws -> (granted: Int64, wait: Int64) {
        let reply = try await redis.evaluate(FleetScripts.draw, keys: [key], arguments: [
            String(rate), String(burst), String(want), String(giveBack),
        ])
        let parts = try #require(reply.array)
        return (try #require(parts[0].integer), try #require(parts[1].integer))
    }

    /// A rate so slow that nothing refills while the test runs: only the burst is there.
    @Test func aDrawGrantsWhatTheBucketHoldsAndAReturnIsCappedAtTheBurst() async throws {
        try await Self.withRedis { _, redis in
            _ = try await redis.scriptLoad(FleetScripts.draw.source)
            let first = try await Self.draw(redis, rate: 0.001, burst: 10, want: 4)
            #expect(first.granted == 4 && first.wait == 0)
            let second = try await Self.draw(redis, rate: 0.001, burst: 10, want: 8)
            #expect(second.granted == 6, "the rest of the burst")
            #expect(second.wait > 1_000, "two tokens at one per 1000 s")
            #expect(try await Self.draw(redis, rate: 0.001, burst: 10, want: 1).granted == 0)
            // Three unused tokens back: they can be drawn again, and no more.
            #expect(try await Self.draw(redis, rate: 0.001, burst: 10, want: 0, giveBack: 3).granted == 0)
            #expect(try await Self.draw(redis, rate: 0.001, burst: 10, want: 5).granted == 3)
            // A return never fills past the burst.
            #expect(try await Self.draw(redis, rate: 0.001, burst: 10, want: 0, giveBack: 50).granted == 0)
            #expect(try await Self.draw(redis, rate: 0.001, burst: 10, want: 20).granted == 10)
        }
    }

    @Test func theBucketLivesAsLongAsItTakesToFillAgain() async throws {
        try await Self.withRedis { _, redis in
            _ = try await Self.draw(redis, key: "slow", rate: 1, burst: 10, want: 10)
            let ttl = try #require(try await redis.send(RESPCommand("PTTL", "slow")).integer)
            #expect(ttl > 10_000 && ttl <= 11_000, "10 tokens at 1/s, and a second: \(ttl) ms")
            _ = try await Self.draw(redis, key: "fast", rate: 1000, burst: 10, want: 1)
            let short = try #require(try await redis.send(RESPCommand("PTTL", "fast")).integer)
            #expect(short > 0 && short <= 1_001)
        }
    }

    @Test func theBucketRefillsAtItsRate() async throws {
        try await Self.withRedis { _, redis in
            let empty = try await Self.draw(redis, rate: 100, burst: 5, want: 5)
            #expect(empty.granted == 5)
            let waited = try await Self.draw(redis, rate: 100, burst: 5, want: 5)
            #expect(waited.wait >= 1 && waited.wait <= 50, "5 tokens at 100/s: \(waited.wait) ms")
            // Waiting for Redis's own clock to pass the wait, then the tokens are there.
            let deadline = ContinuousClock.now + .seconds(20)
            var granted: Int64 = 0
            while granted < 5, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(Int(waited.wait)))
                granted += try await Self.draw(redis, rate: 100, burst: 5, want: 5 - Int(granted)).granted
            }
            #expect(granted == 5)
        }
    }

    @Test func theLiveRelaysAreThoseThatHeartbeatWithinTheirTTL() async throws {
        try await Self.withRedis { _, redis in
            func beat(_ relay: String, ttl: Int) async throws -> Int64? {
                try await redis.evaluate(FleetScripts.heartbeat, keys: ["relays"], arguments: [relay, String(ttl)]).integer
            }
            #expect(try await beat("a", ttl: 60_000) == 1)
            #expect(try await beat("b", ttl: 60_000) == 2)
            #expect(try await beat("a", ttl: 60_000) == 2, "a renewal is no new relay")
            #expect(try await beat("c", ttl: 100) == 3)
            // c stops heartbeating: gone once its 100 ms have passed on Redis's clock.
            let deadline = ContinuousClock.now + .seconds(20)
            var live: Int64? = 3
            while live == 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                live = try await beat("a", ttl: 60_000)
            }
            #expect(live == 2)
        }
    }

    @Test func aSessionCountAdmitsUpToItsLimitAndADeadRelaysLeasesExpire() async throws {
        try await Self.withRedis { _, redis in
            func open(_ member: String, limit: Int = 2, lease: Int = 60_000) async throws -> Int64? {
                let reply = try await redis.evaluate(FleetScripts.openSession, keys: ["count"], arguments: [member, String(limit), String(lease)])
                return reply.array?.first?.integer
            }
            #expect(try await open("r1:1") == 1)
            #expect(try await open("r2:1", lease: 150) == 1)
            #expect(try await open("r1:2") == 0, "two live, the limit")
            #expect(try await open("r1:1") == 1, "a session that holds a lease keeps it")
            // r2 died: its lease is not renewed, and once it expires there is room again.
            let deadline = ContinuousClock.now + .seconds(20)
            var admitted: Int64? = 0
            while admitted == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                admitted = try await open("r1:2")
            }
            #expect(admitted == 1)
            // Renewal re-adds lost leases and answers the live count.
            let renewed = try await redis.evaluate(FleetScripts.renewSessions, keys: ["count"], arguments: ["60000", "r1:1", "r1:2", "r1:3"])
            #expect(renewed.integer == 3)
            _ = try await redis.send(RESPCommand("ZREM", "count", "r1:3"))
            #expect(try await open("r1:4") == 0)
        }
    }
}
