import Testing
@testable import Policy

@Suite("Token buckets with an injected clock")
struct TokenBucketTests {
    static let second: UInt64 = 1_000_000_000

    @Test("starts full: the burst passes at once, the next one waits for a refill")
    func burst() {
        var bucket = TokenBucket(rate: 10, capacity: 5, now: 0)
        for _ in 0..<5 { #expect(bucket.take(1, now: 0) == 0) }
        #expect(bucket.take(1, now: 0) == Self.second / 10, "one token at 10/s is 100 ms away")
        #expect(bucket.tokens == 0, "a refused take spends nothing")
    }

    @Test("refills at its rate, never above capacity")
    func refill() {
        var bucket = TokenBucket(rate: 4, capacity: 2, now: 0)
        _ = bucket.take(2, now: 0)
        bucket.refill(now: Self.second / 4)
        #expect(bucket.tokens == 1)
        bucket.refill(now: 10 * Self.second)
        #expect(bucket.tokens == 2)
        bucket.refill(now: 5 * Self.second)
        #expect(bucket.tokens == 2, "a clock going backwards adds nothing")
    }

    @Test("reserve goes into debt so later callers queue behind earlier ones")
    func reserveKeepsOrder() {
        var bucket = TokenBucket(rate: 10, capacity: 2, now: 0)
        let waits = (0..<5).map { _ in bucket.reserve(1, now: 0) }
        #expect(waits == [0, 0, Self.second / 10, 2 * Self.second / 10, 3 * Self.second / 10])
        #expect(bucket.reserve(1, now: 3 * Self.second / 10) == Self.second / 10, "debt paid down by elapsed time")
    }

    @Test("a cost above the capacity is charged as the capacity; byte costs are fractional")
    func largeCosts() {
        var bucket = TokenBucket(rate: 1000, capacity: 4096, now: 0)
        #expect(bucket.take(1_000_000, now: 0) == 0)
        #expect(bucket.take(1, now: 0) == Self.second / 1000)
        #expect(bucket.take(500, now: Self.second / 2) == 0)
    }

    @Test("reconfigure keeps the tokens, capped at the new capacity; idle once full again")
    func reconfigure() {
        var bucket = TokenBucket(rate: 1, capacity: 10, now: 0)
        _ = bucket.take(3, now: 0)
        bucket.reconfigure(rate: 2, capacity: 5)
        #expect(bucket.tokens == 5)
        _ = bucket.take(5, now: 0)
        #expect(!bucket.isIdle(now: Self.second))
        #expect(bucket.isIdle(now: 3 * Self.second))
    }

    @Test("the table keeps a bucket per key, forgets removed rules and evicts idle buckets when full")
    func table() {
        var table = RateLimiterTable(maxEntries: 2)
        let a = RateLimiterTable.Key(rule: "r", value: "a"), b = RateLimiterTable.Key(rule: "r", value: "b")
        #expect(table.withBucket(a, rate: 1, capacity: 1, now: 0) { $0.take(1, now: 0) } == 0)
        #expect(table.withBucket(a, rate: 1, capacity: 1, now: 0) { $0.take(1, now: 0) } > 0)
        #expect(table.withBucket(b, rate: 1, capacity: 1, now: 0) { $0.take(1, now: 0) } == 0, "another key, another bucket")
        let c = RateLimiterTable.Key(rule: "s", value: "c")
        _ = table.withBucket(c, rate: 1, capacity: 1, now: 10 * Self.second) { $0.take(1, now: 10 * Self.second) }
        #expect(table.count == 1, "a and b were idle again and were evicted to make room")
        table.retain(rules: ["r"])
        #expect(table.count == 0)
    }

    @Test("a rate so small the wait overflows (perSecond: 1e-300 validates) waits the longest, without trapping")
    func tinyRateWaitIsCapped() throws {
        var bucket = TokenBucket(rate: 1e-300, capacity: 1, now: 0)
        #expect(bucket.take(1, now: 0) == 0)
        #expect(bucket.take(1, now: 1) == TokenBucket.maxWait)
        var debtor = TokenBucket(rate: 1e-300, capacity: 1, now: 0)
        #expect(debtor.reserve(1, now: 2) == 0)
        #expect(debtor.reserve(1, now: 3) == TokenBucket.maxWait)
        // Through a policy: the second message over the limit is delayed, the relay goes on.
        let document = try PolicyDocument(yaml: "rules: [{ name: r, action: { rateLimit: { perSecond: 1e-300 } } }]")
        let engine = PolicyEngine(rules: document.rules)
        let session = SessionFacts(id: 1, user: "u", clientIP: "10.0.0.1")
        let message = MessageFacts(direction: .clientToServer, type: .request, properties: ["Profile": "rev"])
        for now in [UInt64(0), 1, 2] { _ = engine.evaluate(message, session: session, now: now) }
    }
}
