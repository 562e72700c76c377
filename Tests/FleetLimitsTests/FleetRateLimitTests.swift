import BLIPTestSupport
import FleetLimits
import Foundation
import Testing

/// Three relays in front of one embedded gateway share one redis-server: clients of three users,
/// one per user on each relay, each asking far more than the limit. With `scope: fleet` each
/// user's admitted rate across the fleet is the limit within 10 %; with `scope: local` each
/// relay admits the whole limit (about three times it); with Redis gone the relays fall back to
/// a third each, say so once and set the metric, and share again once it is back.
///
/// The burst is a second's tokens: a shared phase's warm-up (1.5 s of clients asking far more)
/// drains it before the counted window, including the full bucket a restarted Redis starts
/// with, and a relay or client that a busy machine stalls for up to a second finds the tokens
/// that accrued meanwhile still in the bucket instead of lost past a full one (at half a second,
/// a loaded machine admitted 11 % less than the limit).
///
/// The windows are long enough for what can be spent in them that did not accrue in them: the
/// burst a stalled relay's bucket refills to, and the allowance each relay holds (about 1.5
/// batches), some 30 tokens against a band of 3 a second: 12 s shared, 8 s apart.
@Suite(.serialized, .timeLimit(.minutes(8))) struct FleetRateLimitTests {
    static let limit = 30.0
    static let users = ["alice", "bob", "carol"]

    static func policy(scope: String) -> String {
        """
        rules:
          - name: per-user
            match: { from: client, profile: getCheckpoint }
            action: { rateLimit: { perSecond: \(Int(limit)), burst: \(Int(limit)), key: user, onExceed: deny, scope: \(scope) } }
        """
    }

    static func expectWithinBand(_ counts: FleetLoad.Counts, of expected: Double, _ phase: String) {
        for user in users {
            let rate = counts.rate(user)
            #expect(abs(rate - expected) <= expected * 0.1,
                    "\(phase): \(user) admitted \(counts.perUser[user, default: 0]) in \(Double(counts.elapsed) / 1e9) s, \(rate)/s against \(expected)/s")
        }
    }

    @Test func aFleetLimitIsOneLimitAcrossThreeRelaysAndFallsBackWhileRedisIsAway() async throws {
        try await RedisServerProcess.with { redis in
            try await FleetFixture.with(relays: 3, redisURL: redis.url, policy: Self.policy(scope: "fleet")) { fleet in
                #expect(await fleet.waitForAll { $0.liveRelays == 3 && !$0.degraded }, "every relay sees the three")
                let clients = try await FleetLoad.connect(fleet, users: Self.users)
                let shared = try await FleetLoad.run(clients, warmUp: .milliseconds(1500), window: .seconds(12))
                Self.expectWithinBand(shared, of: Self.limit, "shared")

                // Redis gone: each relay keeps a third of the limit, and says so once.
                try await redis.kill()
                #expect(await fleet.waitForAll { $0.degraded })
                let degraded = try await FleetLoad.run(clients, warmUp: .milliseconds(300), window: .seconds(8))
                Self.expectWithinBand(degraded, of: Self.limit, "degraded")
                for user in Self.users {
                    for relay in fleet.members.indices {
                        let share = Double(degraded.perUserAndRelay["\(user)@\(relay)", default: 0]) / (Double(degraded.elapsed) / 1e9)
                        #expect(abs(share - Self.limit / 3) <= Self.limit / 3 * 0.2, "\(user) on relay \(relay): \(share)/s")
                    }
                }
                for (index, member) in fleet.members.enumerated() {
                    #expect(member.log.count(containing: "fleet limits degraded") == 1, "relay \(index): \(member.log.all)")
                    let scrape = fleet.scrape(index)
                    #expect(scrape.contains("blipscope_fleet_limits_degraded 1"), "\(scrape)")
                    #expect(scrape.contains("blipscope_fleet_limits_fallbacks_total 1"))
                }

                // Redis back: shared limits again, logged once, the metric back at 0.
                try await redis.restart()
                #expect(await fleet.waitForAll { !$0.degraded && $0.liveRelays == 3 })
                let again = try await FleetLoad.run(clients, warmUp: .milliseconds(1500), window: .seconds(12))
                Self.expectWithinBand(again, of: Self.limit, "shared again")
                for (index, member) in fleet.members.enumerated() {
                    #expect(member.log.count(containing: "fleet limits shared again") == 1, "relay \(index): \(member.log.all)")
                    #expect(member.log.count(containing: "fleet limits degraded") == 1)
                    #expect(fleet.scrape(index).contains("blipscope_fleet_limits_degraded 0"))
                }
                await FleetLoad.close(clients)
            }
        }
    }

    @Test func localLimitsLetEachRelayAdmitTheWholeLimit() async throws {
        try await RedisServerProcess.with { redis in
            try await FleetFixture.with(relays: 3, redisURL: redis.url, policy: Self.policy(scope: "local")) { fleet in
                let clients = try await FleetLoad.connect(fleet, users: Self.users)
                let local = try await FleetLoad.run(clients, window: .seconds(3))
                for user in Self.users {
                    #expect(local.rate(user) > 2 * Self.limit, "\(user): \(local.rate(user))/s, about 3 × \(Self.limit) expected")
                }
                await FleetLoad.close(clients)
            }
        }
    }
}
