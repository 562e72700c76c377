import FleetLimits
import Policy
import Testing

/// The fleet limits' state machine without Redis: fake clock, grants handed in by the test.
@Suite struct FleetLimiterCoreTests {
    static let second: UInt64 = 1_000_000_000
    static let configuration = FleetLimitsConfiguration(relayID: "test")

    static func spend(_ rate: Double = 40, burst: Double = 8, onExceed: RateLimit.OnExceed = .deny, bucket: String = "messages|user:alice") -> FleetSpend {
        FleetSpend(rule: "per-user", bucket: bucket, rate: rate, burst: burst, cost: 1, onExceed: onExceed)
    }

    @Test func aBatchIsATenthOfASecondsRateWithinItsBounds() {
        let configuration = Self.configuration
        #expect(configuration.batch(rate: 40) == 4)
        #expect(configuration.batch(rate: 0.5) == 1)
        #expect(configuration.batch(rate: 1e12) == configuration.maxBatch)
        #expect(configuration.batch(rate: 35) == 4, "rounded up")
        #expect(configuration.batch(rate: 40, roundTrip: 500_000_000) == 40, "a slow Redis: twice its round trip's tokens")
        #expect(configuration.batch(rate: 40, roundTrip: 10_000_000) == 4)
    }

    @Test func aSlowDrawMakesTheNextBatchCoverTwiceItsRoundTrip() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        let first = try #require(core.spend(Self.spend(), now: 0).1)
        #expect(first.want == 4)
        core.drawn(first, granted: 0, retryAfterMilliseconds: 0, now: 300_000_000, roundTrip: 300_000_000)
        let second = try #require(core.spend(Self.spend(), now: 310_000_000).1)
        #expect(second.want == 24, "40/s × 2 × 300 ms")
    }

    @Test func anEmptyAllowanceRefusesAndDrawsOnceThenSpendsTheGrant() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        let (first, draw) = core.spend(Self.spend(), now: 0)
        #expect(first == .refused)
        let asked = try #require(draw)
        #expect(asked.want == 4 && asked.giveBack == 0)
        let (second, again) = core.spend(Self.spend(), now: 1)
        #expect(second == .refused)
        #expect(again == nil, "one draw in flight per key")
        core.drawn(asked, granted: 4, retryAfterMilliseconds: 0, now: 2)
        var results: [FleetSpendResult] = []
        var draws: [FleetDraw] = []
        for tick in 0..<5 {
            let (result, draw) = core.spend(Self.spend(), now: 3 + UInt64(tick))
            results.append(result)
            if let draw { draws.append(draw) }
        }
        #expect(results == [.granted, .granted, .granted, .granted, .refused])
        #expect(draws.count == 1, "the next draw starts once fewer than half a batch is left")
        #expect(core.tokens(asked.key) == 0)
    }

    @Test func afterAnEmptyAnswerTheNextDrawWaitsForRedisBucket() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        let draw = try #require(core.spend(Self.spend(), now: 0).1)
        core.drawn(draw, granted: 0, retryAfterMilliseconds: 50, now: 0)
        #expect(core.spend(Self.spend(), now: 49_000_000).1 == nil)
        #expect(core.spend(Self.spend(), now: 50_000_000).1 != nil)
    }

    @Test func delayModeSpendsOnCreditAndWaitsForTheDebtAtThisRelaysShare() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        _ = core.heartbeat(liveRelays: 2, sentAt: 0)
        let (first, draw) = core.spend(Self.spend(onExceed: .delay), now: 0)
        // One token owed at 40/s ÷ 2 relays: 50 ms.
        #expect(first == .wait(nanoseconds: 50_000_000))
        #expect(try #require(draw).want == 5, "a batch and the debt")
        let (second, _) = core.spend(Self.spend(onExceed: .delay), now: 0)
        #expect(second == .wait(nanoseconds: 100_000_000))
        core.drawn(try #require(draw), granted: 5, retryAfterMilliseconds: 0, now: 1)
        #expect(core.tokens(try #require(draw).key) == 3)
    }

    @Test func aFailedDrawFallsBackOnceToLimitOverLiveRelaysAndAHeartbeatBringsItBack() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        _ = core.heartbeat(liveRelays: 3, sentAt: 0)
        let draw = try #require(core.spend(Self.spend(30, burst: 3), now: 0).1)
        #expect(core.drawFailed(draw, reason: "timed out", sentAt: 10) == .degraded(reason: "timed out", liveRelays: 3))
        #expect(core.redisFailed(reason: "again", sentAt: 20) == nil, "entering is reported once")
        #expect(core.heartbeat(liveRelays: 3, sentAt: 5) == nil, "an answer sent before the fallback does not end it")
        core.drawn(draw, granted: 0, retryAfterMilliseconds: 0, now: 1)
        #expect(core.degraded, "a draw sent before the fallback does not end it")
        #expect(core.degraded)
        // 30/s over 3 relays: 10/s, a burst of max(1, 3 ÷ 3) = 1, and no draw while degraded.
        let (granted, none) = core.spend(Self.spend(30, burst: 3), now: Self.second)
        #expect(granted == .granted && none == nil)
        #expect(core.spend(Self.spend(30, burst: 3), now: Self.second).0 == .refused)
        #expect(core.spend(Self.spend(30, burst: 3), now: Self.second + 100_000_000).0 == .granted)
        var admitted = 0
        for tick in 0..<1000 where core.spend(Self.spend(30, burst: 3), now: 2 * Self.second + UInt64(tick) * 1_000_000).0 == .granted {
            admitted += 1
        }
        #expect((9...11).contains(admitted), "\(admitted) in one second at 10/s")
        #expect(core.heartbeat(liveRelays: 3, sentAt: 3 * Self.second) == .shared)
        #expect(core.heartbeat(liveRelays: 3, sentAt: 3 * Self.second) == nil, "leaving is reported once")
        #expect(core.redisFailed(reason: "late", sentAt: 15) == nil, "a failure of a call sent before the return is old news")
        #expect(core.spend(Self.spend(30, burst: 3), now: 4 * Self.second).1 != nil, "draws again")
    }

    @Test func idleTokensGoBackAtTheSweep() throws {
        var core = FleetLimiterCore(configuration: Self.configuration)
        let draw = try #require(core.spend(Self.spend(), now: 0).1)
        core.drawn(draw, granted: 4, retryAfterMilliseconds: 0, now: 0)
        _ = core.spend(Self.spend(), now: 0)
        #expect(core.sweep(now: Self.second / 2).isEmpty, "used half a second ago")
        let returns = core.sweep(now: Self.second)
        #expect(returns.map(\.giveBack) == [3])
        #expect(returns.map(\.want) == [0])
        #expect(core.tokens(draw.key) == nil, "forgotten once given back")
    }

    /// Three relays drawing from one modelled Redis bucket (the script's arithmetic), every
    /// relay's clients asking far more than the limit: over ten simulated seconds the fleet
    /// admits the limit's rate within the error bound docs/redis.md states (a burst plus a
    /// batch per relay), where three local limits would admit three times it.
    @Test func threeRelaysDrawingInBatchesAdmitTheFleetRate() {
        let rate = 40.0, burst = 8.0
        var cores = (0..<3).map { _ in FleetLimiterCore(configuration: Self.configuration) }
        for index in cores.indices { _ = cores[index].heartbeat(liveRelays: 3, sentAt: 0) }
        var bucket = (tokens: burst, at: UInt64(0))
        var inFlight: [(relay: Int, draw: FleetDraw, arrives: UInt64)] = []
        var admitted = 0
        let step: UInt64 = 2_000_000  // every relay gets a message each 2 ms: 500/s each
        let latency: UInt64 = 3_000_000
        var now: UInt64 = 0
        while now < 10 * Self.second {
            for (index, flight) in inFlight.enumerated().reversed() where flight.arrives <= now {
                let elapsed = Double(now - bucket.at) / 1e9
                bucket = (min(burst, bucket.tokens + elapsed * rate), now)
                bucket.tokens = min(burst, bucket.tokens + Double(flight.draw.giveBack))
                let granted = max(0, min(flight.draw.want, Int(bucket.tokens.rounded(.down))))
                bucket.tokens -= Double(granted)
                let wait = granted < flight.draw.want ? Int(((min(Double(flight.draw.want - granted), burst) - bucket.tokens) / rate * 1000).rounded(.up)) : 0
                _ = cores[flight.relay].drawn(flight.draw, granted: granted, retryAfterMilliseconds: wait, now: now)
                inFlight.remove(at: index)
            }
            for relay in cores.indices {
                let (result, draw) = cores[relay].spend(Self.spend(rate, burst: burst), now: now)
                if result == .granted { admitted += 1 }
                if let draw { inFlight.append((relay, draw, now + latency)) }
            }
            now += step
        }
        let expected = rate * 10
        #expect(Double(admitted) <= expected + burst, "\(admitted): never more than the bucket gave")
        #expect(Double(admitted) >= expected * 0.9, "\(admitted) of \(expected)")
    }

    @Test func whileDegradedEachRelayAdmitsItsShareOfTheSessions() {
        var core = FleetLimiterCore(configuration: Self.configuration)
        _ = core.heartbeat(liveRelays: 2, sentAt: 0)
        let refusal = ConnectionRefusal(status: 503, retryAfter: 5, reason: "full", rule: "two", dryRun: false)
        let claims = [FleetSessionClaim(rule: "two", key: "user:alice", limit: 4, refusal: refusal)]
        #expect(core.localRefusal(claims) == nil)
        core.opened(claims, session: 1)
        core.opened(claims, session: 2)
        #expect(core.localRefusal(claims) == refusal, "4 ÷ 2 relays: two here")
        core.closed(claims, session: 1)
        #expect(core.localRefusal(claims) == nil)
        #expect(FleetLimiterCore.count(claims[0]) == "two:user:alice")
    }
}
