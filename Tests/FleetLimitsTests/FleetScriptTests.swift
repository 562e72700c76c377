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

    /// `commands` in one MULTI/EXEC: Redis runs them back to back, on one reading of its clock
    /// as near as makes no difference, however slowly this machine sends them.
    static func atOnce(_ redis: RedisClient, _ commands: [RESPCommand]) async throws -> [RESPValue] {
        _ = try await redis.send(RESPCommand("MULTI"))
        for command in commands { _ = try await redis.send(command) }
        return try #require(try await redis.send(RESPCommand("EXEC")).array)
    }

    static func eval(_ script: RedisScript, key: String, _ arguments: [String]) -> RESPCommand {
        RESPCommand("EVAL", [script.source, "1", key].map { ByteBuffer(string: $0) } + arguments.map { ByteBuffer(string: $0) })
    }

    static func integers(_ value: RESPValue) -> [Int64] { value.array?.compactMap(\.integer) ?? value.integer.map { [$0] } ?? [] }

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
            let slow = try await Self.atOnce(redis, [Self.eval(FleetScripts.draw, key: "slow", ["1", "10", "10", "0"]),
                                                     RESPCommand("PTTL", "slow")])
            #expect(Self.integers(slow[0]) == [10, 0])
            let ttl = try #require(slow[1].integer)
            #expect(ttl > 10_900 && ttl <= 11_000, "10 tokens at 1/s, and a second: \(ttl) ms")
            let fast = try await Self.atOnce(redis, [Self.eval(FleetScripts.draw, key: "fast", ["1000", "10", "1", "0"]),
                                                     RESPCommand("PTTL", "fast")])
            let short = try #require(fast[1].integer)
            #expect(short > 900 && short <= 1_001, "1 token at 1000/s, and a second: \(short) ms")
        }
    }

    @Test func theBucketRefillsAtItsRate() async throws {
        try await Self.withRedis { _, redis in
            let draws = try await Self.atOnce(redis, [Self.eval(FleetScripts.draw, key: "bucket", ["100", "5", "5", "0"]),
                                                      Self.eval(FleetScripts.draw, key: "bucket", ["100", "5", "5", "0"])])
            #expect(Self.integers(draws[0]) == [5, 0])
            let again = Self.integers(draws[1])
            #expect(again.first == 0, "emptied a moment before")
            let wait = try #require(again.last)
            #expect(wait >= 49 && wait <= 50, "5 tokens at 100/s: \(wait) ms")
            // Waiting for Redis's own clock to pass the wait, then the tokens are there.
            let deadline = ContinuousClock.now + .seconds(20)
            var granted: Int64 = 0
            while granted < 5, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(Int(wait)))
                granted += try await Self.draw(redis, rate: 100, burst: 5, want: 5 - Int(granted)).granted
            }
            #expect(granted == 5)
        }
    }

    @Test func theLiveRelaysAreThoseThatHeartbeatWithinTheirTTL() async throws {
        try await Self.withRedis { _, redis in
            func beat(_ relay: String, ttl: Int) -> RESPCommand { Self.eval(FleetScripts.heartbeat, key: "relays", [relay, String(ttl)]) }
            let beats = try await Self.atOnce(redis, [beat("a", ttl: 60_000), beat("b", ttl: 60_000), beat("a", ttl: 60_000),
                                                      beat("c", ttl: 100)])
            #expect(beats.compactMap(\.integer) == [1, 2, 2, 3], "a renewal is no new relay")
            // c stops heartbeating: gone once its 100 ms have passed on Redis's clock; a and b,
            // whose entries last a minute, stay although c's was the last written.
            let deadline = ContinuousClock.now + .seconds(20)
            var live: Int64? = 3
            while live == 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                live = try await redis.send(beat("a", ttl: 60_000)).integer
            }
            #expect(live == 2)
            let ttl = try #require(try await redis.send(RESPCommand("PTTL", "relays")).integer)
            #expect(ttl > 50_000, "the set lives as long as its last entry: \(ttl) ms")
        }
    }

    @Test func aSessionCountAdmitsUpToItsLimitAndADeadRelaysLeasesExpire() async throws {
        try await Self.withRedis { _, redis in
            func open(_ member: String, limit: Int = 2, lease: Int = 60_000) -> RESPCommand {
                Self.eval(FleetScripts.openSession, key: "count", [member, String(limit), String(lease)])
            }
            let opened = try await Self.atOnce(redis, [open("r1:1"), open("r2:1", lease: 150), open("r1:2"), open("r1:1")])
            #expect(opened.map { Self.integers($0).first } == [1, 1, 0, 1],
                    "two admitted, the third refused at the limit, a session holding a lease keeps it")
            // r2 died: its lease is not renewed, and once it expires there is room again.
            let deadline = ContinuousClock.now + .seconds(20)
            var admitted: Int64? = 0
            while admitted == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                admitted = Self.integers(try await redis.send(open("r1:2"))).first
            }
            #expect(admitted == 1)
            // Renewal re-adds lost leases and answers the live count.
            let renewed = try await redis.evaluate(FleetScripts.renewSessions, keys: ["count"], arguments: ["60000", "r1:1", "r1:2", "r1:3"])
            #expect(renewed.integer == 3)
            _ = try await redis.send(RESPCommand("ZREM", "count", "r1:3"))
            #expect(Self.integers(try await redis.send(open("r1:4"))).first == 0)
        }
    }
}
