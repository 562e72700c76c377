/// Something that sends commands to Redis: a ``RedisConnection`` or a ``RedisClient``. The
/// commands the relay uses are written once, over ``send(_:)``, in extensions of this protocol.
public protocol RedisCommandSending: Sendable {
    /// Sends `command` and returns its reply. An error reply throws
    /// ``RedisError/Code/serverError``; no reply within ``RedisLimits/commandTimeout`` throws
    /// ``RedisError/Code/timedOut``; the call never waits longer than that.
    func send(_ command: RESPCommand) async throws(RedisError) -> RESPValue
}
