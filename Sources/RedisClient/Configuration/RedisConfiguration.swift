/// Everything a ``RedisClient`` or ``RedisConnection`` is made with.
public struct RedisConfiguration: Sendable, Hashable {
    public var endpoint: RedisEndpoint
    /// Used when ``RedisEndpoint/usesTLS`` (`rediss://`).
    public var tls: RedisTLS
    public var limits: RedisLimits
    public var backoff: RedisBackoff

    public init(endpoint: RedisEndpoint, tls: RedisTLS = RedisTLS(), limits: RedisLimits = .default,
                backoff: RedisBackoff = .default) {
        self.endpoint = endpoint
        self.tls = tls
        self.limits = limits
        self.backoff = backoff
    }

    /// A configuration for the server at `url` (`redis://…` or `rediss://…`).
    public init(url: String, tls: RedisTLS = RedisTLS(), limits: RedisLimits = .default,
                backoff: RedisBackoff = .default) throws(RedisError) {
        self.init(endpoint: try RedisEndpoint(url: url), tls: tls, limits: limits, backoff: backoff)
    }
}
