import NIOCore

/// The bounds of one Redis connection: what a server's replies may make it hold, how many
/// commands may wait for replies, and how long anything may take.
///
/// A reply that crosses a reply limit is a ``RedisError/Code/limitExceeded`` error that ends
/// that connection (the client logs why and connects again): a hostile or broken server can
/// make the client hold at most about ``maxReplyBytes`` per connection. A command beyond
/// ``maxPendingCommands`` fails at once and the connection stays up.
public struct RedisLimits: Sendable, Hashable {
    /// Longest bulk string in a reply, in bytes. Redis's own cap on what it accepts is 512 MB
    /// (`proto-max-bulk-len`); the relay's values (counters, session records, script hashes) are
    /// tens of bytes, so the default is far below it.
    public var maxBulkLength: Int
    /// Most elements in one array of a reply. A registry listing asks for at most this many
    /// (ZRANGEBYSCORE … LIMIT); HGETALL of a session record has a dozen.
    public var maxArrayElements: Int
    /// Deepest nesting of arrays in a reply, the outermost array being depth 1. The relay's
    /// commands answer with depth 1 (SCAN, a Lua table, 2); hiredis stops at 7 nested levels.
    public var maxNestingDepth: Int
    /// Longest line, CRLF excluded: a simple string, an error, an integer, a length header.
    /// Redis's error messages are one short sentence; a Lua error quotes the script's line.
    public var maxLineLength: Int
    /// Most bytes one reply may have on the wire, every element's framing counted. Bounds what
    /// a partly received reply holds, and the elements of a complete one with it.
    public var maxReplyBytes: Int
    /// Most commands sent on one connection and still waiting for their replies (pipelining).
    /// One more fails at once with ``RedisError/Code/limitExceeded``; none waits in a queue.
    public var maxPendingCommands: Int
    /// Longest time to make a connection: TCP, TLS, and each command of the handshake (AUTH,
    /// SELECT, PING) in turn.
    public var connectTimeout: TimeAmount
    /// Longest time a command waits for its reply. Then it fails with
    /// ``RedisError/Code/timedOut``, and the connection, whose replies are matched in order and
    /// so can no longer be trusted to come, is closed and made again.
    public var commandTimeout: TimeAmount

    public init(
        maxBulkLength: Int = 4 << 20,
        maxArrayElements: Int = 65_536,
        maxNestingDepth: Int = 8,
        maxLineLength: Int = 64 << 10,
        maxReplyBytes: Int = 16 << 20,
        maxPendingCommands: Int = 4_096,
        connectTimeout: TimeAmount = .seconds(5),
        commandTimeout: TimeAmount = .seconds(2)
    ) {
        self.maxBulkLength = maxBulkLength
        self.maxArrayElements = maxArrayElements
        self.maxNestingDepth = maxNestingDepth
        self.maxLineLength = maxLineLength
        self.maxReplyBytes = maxReplyBytes
        self.maxPendingCommands = maxPendingCommands
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    public static let `default` = RedisLimits()
}
