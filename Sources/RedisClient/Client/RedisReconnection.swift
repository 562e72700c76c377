import NIOCore

/// When a ``RedisClient`` connects: a pure state machine, fed the outcomes of attempts and
/// the ends of connections, answering what to do next. No I/O, no clock: the shell does what
/// it answers and tells it when a wait is over.
///
/// While connected, commands go to the connection. While an attempt runs or the client waits
/// for the next one, commands fail at once (the shell answers ``RedisError/Code/notConnected``
/// with ``lastFailure``): nothing queues while the server is away.
struct RedisReconnection {
    enum State: Equatable {
        case idle, connecting, connected, waiting, shutDown
    }

    enum Action: Equatable {
        case none
        /// Start an attempt.
        case connect
        /// Wait this long, then report ``delayElapsed()``.
        case retry(after: TimeAmount)
        /// Close the connection the attempt made (the client was shut down meanwhile).
        case closeConnection
    }

    let backoff: RedisBackoff
    private(set) var state = State.idle
    /// Attempts that failed since the last connection was made.
    private(set) var failures = 0
    /// Why the last attempt failed or the last connection ended.
    private(set) var lastFailure: RedisError?

    init(backoff: RedisBackoff) {
        self.backoff = backoff
    }

    mutating func start() -> Action {
        guard state == .idle else { return .none }
        state = .connecting
        return .connect
    }

    mutating func attemptSucceeded() -> Action {
        guard state == .connecting else { return .closeConnection }
        state = .connected
        failures = 0
        lastFailure = nil
        return .none
    }

    /// `jitter`, in 0...1, places the wait within its band (``RedisBackoff``).
    mutating func attemptFailed(_ error: RedisError, jitter: Double) -> Action {
        guard state == .connecting else { return .none }
        state = .waiting
        lastFailure = error
        failures += 1
        return .retry(after: backoff.delay(afterFailures: failures - 1, jitter: jitter))
    }

    /// The connection ended: wait ``RedisBackoff/initialDelay`` (within its band) before the
    /// next attempt, so a server that accepts and drops at once is not hammered.
    mutating func connectionLost(_ error: RedisError, jitter: Double) -> Action {
        guard state == .connected else { return .none }
        state = .waiting
        lastFailure = error
        return .retry(after: backoff.delay(afterFailures: 0, jitter: jitter))
    }

    mutating func delayElapsed() -> Action {
        guard state == .waiting else { return .none }
        state = .connecting
        return .connect
    }

    mutating func shutdown() -> Action {
        let wasConnected = state == .connected
        state = .shutDown
        return wasConnected ? .closeConnection : .none
    }
}
