import NIOCore

/// What a ``RedisConnection`` writes into its channel: a command, how long it may wait for its
/// reply, and the promise its reply (or failure) completes.
struct RedisRequest: Sendable {
    let command: RESPCommand
    let timeout: TimeAmount
    let reply: EventLoopPromise<RESPValue>
}
