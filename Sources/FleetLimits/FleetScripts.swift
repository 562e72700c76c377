import Crypto
import RedisClient

/// The Lua scripts the relays run in Redis, each loaded once (SCRIPT LOAD at start, then
/// EVALSHA; after a Redis restart EVALSHA's NOSCRIPT falls back to EVAL, which loads it again).
/// Every script reads Redis's clock (TIME), the one clock of the fleet, and sets a time to live
/// on what it writes, so nothing outlives its use.
enum FleetScripts {
    /// A token bucket per limit key (KEYS[1], a hash of `tokens` and `at`, milliseconds):
    /// refilled at ARGV[1] tokens/s up to ARGV[2], it first takes back ARGV[4] unused tokens (up
    /// to the capacity: a return never makes more than a full bucket), then grants
    /// `min(ARGV[3], floor(tokens))`. Answers `{granted, wait}`: `wait` is the milliseconds until
    /// the bucket holds what was asked (at most its capacity) again, 0 when all was granted.
    /// The key lives as long as the bucket takes to fill again plus a second: a key that expired
    /// is a full bucket, which is what it would have become.
    static let draw = script("""
        local rate = tonumber(ARGV[1])
        local capacity = tonumber(ARGV[2])
        local want = tonumber(ARGV[3])
        local giveBack = tonumber(ARGV[4])
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens = tonumber(state[1])
        local at = tonumber(state[2])
        if tokens == nil or at == nil then tokens = capacity; at = now end
        if now > at then
          tokens = math.min(capacity, tokens + (now - at) * rate / 1000)
          at = now
        end
        tokens = math.min(capacity, tokens + giveBack)
        local granted = math.max(0, math.min(want, math.floor(tokens)))
        tokens = tokens - granted
        redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
        redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
        local wait = 0
        if granted < want then
          wait = math.ceil((math.min(want - granted, capacity) - tokens) / rate * 1000)
          if wait < 1 then wait = 1 end
        end
        return {granted, wait}
        """)

    /// The fleet's live relays (KEYS[1], a sorted set of relay IDs scored by when they expire):
    /// renews ARGV[1] for ARGV[2] milliseconds, forgets the expired, answers how many are live.
    /// The set lives until its last member expires.
    static let heartbeat = script("""
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        \(keepUntilLastExpiry)
        return redis.call('ZCARD', KEYS[1])
        """)

    /// A session lease in one count (KEYS[1], a sorted set of `relay:session` scored by when the
    /// lease expires): forgets expired leases, then admits ARGV[1] if fewer than ARGV[2] are
    /// live (or it holds one already), for ARGV[3] milliseconds. Answers `{admitted, live}`.
    static let openSession = script("""
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        local live = redis.call('ZCARD', KEYS[1])
        if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and live >= tonumber(ARGV[2]) then
          return {0, live}
        end
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
        \(keepUntilLastExpiry)
        return {1, redis.call('ZCARD', KEYS[1])}
        """)

    /// Renews leases (ARGV[2…]) in one count (KEYS[1]) for ARGV[1] milliseconds, adding those
    /// it lost (sessions opened while Redis was away). Answers how many leases are live.
    static let renewSessions = script("""
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        local lease = tonumber(ARGV[1])
        for index = 2, #ARGV do redis.call('ZADD', KEYS[1], now + lease, ARGV[index]) end
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        \(keepUntilLastExpiry)
        return redis.call('ZCARD', KEYS[1])
        """)

    static let all = [draw, heartbeat, openSession, renewSessions]

    /// A sorted set scored by expiry lives until its last member expires (and a second more),
    /// whatever time to live the member just written has: one short lease must not take the
    /// others with it. Needs `now` (ms) in scope.
    private static let keepUntilLastExpiry = """
        local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
        if last[2] ~= nil then redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(tonumber(last[2]) - now)) + 1000) end
        """

    private static func script(_ source: String) -> RedisScript {
        let hex = Insecure.SHA1.hash(data: Array(source.utf8)).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
        return RedisScript(source: source, sha1: hex)
    }
}
