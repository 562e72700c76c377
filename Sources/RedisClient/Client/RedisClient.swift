import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// A Redis client that keeps one connection up: it connects on ``start()``, and after a drop
/// or a failed attempt connects again, waiting longer after each failure (``RedisBackoff``).
///
/// Commands are pipelined on the connection, each bounded by
/// ``RedisLimits/commandTimeout``. While there is no connection a command fails at once with
/// ``RedisError/Code/notConnected``: callers (the relay's fleet limits) fall back to what they
/// do without Redis, and nothing queues. Every state change happens on one event loop.
public final class RedisClient: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    public let eventLoop: any EventLoop
    private let logger: Logger
    private let sslContext: NIOSSLContext?
    private let box: NIOLoopBoundBox<State>

    /// The shell's state, confined to ``eventLoop``.
    private final class State {
        var machine: RedisReconnection
        var connection: RedisConnection?
        var retry: Scheduled<Void>?
        var waiters: [EventLoopPromise<Void>] = []

        init(backoff: RedisBackoff) { machine = RedisReconnection(backoff: backoff) }
    }

    /// Loads the TLS context (for `rediss://`) at once, so a bad CA file fails here. Does not
    /// connect: ``start()`` does.
    public init(configuration: RedisConfiguration, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
                logger: Logger = Logger(label: "blipscope.redis")) throws(RedisError) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        sslContext = configuration.endpoint.usesTLS ? try configuration.tls.makeContext() : nil
        box = NIOLoopBoundBox.makeBoxSendingValue(State(backoff: configuration.backoff), eventLoop: eventLoop)
    }

    /// Starts connecting (once; later calls do nothing) and returns at once.
    public func start() {
        eventLoop.execute { self.perform(self.box.value.machine.start()) }
    }

    /// Returns once the client is connected; throws ``RedisError/Code/notConnected`` (with the
    /// last failure) if it is not within `timeout`, ``RedisError/Code/shutDown`` once shut down.
    public func waitForConnection(within timeout: TimeAmount) async throws(RedisError) {
        let future: EventLoopFuture<Void> = eventLoop.flatSubmit {
            let state = self.box.value
            switch state.machine.state {
            case .connected: return self.eventLoop.makeSucceededVoidFuture()
            case .shutDown: return self.eventLoop.makeFailedFuture(RedisError.shutDown)
            case .idle, .connecting, .waiting: break
            }
            let promise = self.eventLoop.makePromise(of: Void.self)
            state.waiters.append(promise)
            let expiry = self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                let state = self.box.value
                guard let index = state.waiters.firstIndex(where: { $0.futureResult === promise.futureResult }) else { return }
                state.waiters.remove(at: index)
                promise.fail(RedisError.notConnected(self.configuration.endpoint, lastFailure: state.machine.lastFailure))
            }
            promise.futureResult.whenComplete { _ in expiry.cancel() }
            return promise.futureResult
        }
        try await RedisError.awaiting(future)
    }

    /// Whether a connection is up right now.
    public var isConnected: Bool {
        get async { (try? await eventLoop.submit { self.box.value.machine.state == .connected }.get()) ?? false }
    }

    public func send(_ command: RESPCommand) async throws(RedisError) -> RESPValue {
        let reply: EventLoopFuture<RESPValue> = eventLoop.flatSubmit {
            let state = self.box.value
            guard state.machine.state == .connected, let connection = state.connection else {
                let error = state.machine.state == .shutDown ? RedisError.shutDown
                    : .notConnected(self.configuration.endpoint, lastFailure: state.machine.lastFailure)
                return self.eventLoop.makeFailedFuture(error)
            }
            return connection.send(command, timeout: self.configuration.limits.commandTimeout)
        }
        return try await RedisError.awaiting(reply)
    }

    /// Stops reconnecting and closes the connection; commands in flight fail with
    /// ``RedisError/Code/shutDown``, and so does every command after.
    public func shutdown() async {
        let closing: EventLoopFuture<Void> = eventLoop.flatSubmit {
            let state = self.box.value
            _ = state.machine.shutdown()
            state.retry?.cancel()
            state.retry = nil
            for waiter in state.waiters { waiter.fail(RedisError.shutDown) }
            state.waiters = []
            let connection = state.connection
            state.connection = nil
            guard let connection else { return self.eventLoop.makeSucceededVoidFuture() }
            return self.eventLoop.makeFutureWithTask { await connection.close() }
        }
        try? await closing.get()
    }

    /// Runs on the loop: does what the machine answered.
    private func perform(_ action: RedisReconnection.Action) {
        let state = box.value
        switch action {
        case .none, .closeConnection:
            break
        case .connect:
            attempt()
        case let .retry(delay):
            state.retry = eventLoop.assumeIsolated().scheduleTask(in: delay) {
                self.box.value.retry = nil
                self.perform(self.box.value.machine.delayElapsed())
            }
        }
    }

    private func attempt() {
        let endpoint = configuration.endpoint
        RedisConnection.connect(configuration: configuration, sslContext: sslContext, on: eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                let state = self.box.value
                switch result {
                case let .success(connection):
                    guard state.machine.attemptSucceeded() == .none else {
                        Task { await connection.close() }
                        return
                    }
                    self.logger.info("connected to redis", metadata: ["redis": "\(endpoint)"])
                    state.connection = connection
                    connection.ended.assumeIsolated().whenSuccess { reason in self.lost(connection, reason) }
                    for waiter in state.waiters { waiter.succeed() }
                    state.waiters = []
                case let .failure(failure):
                    let error = failure as? RedisError ?? .connectFailed(endpoint, reason: "\(failure)")
                    let action = state.machine.attemptFailed(error, jitter: Double.random(in: 0...1))
                    // The first failure in a row is news; the next ones, every few seconds, are not.
                    let level: Logger.Level = state.machine.failures == 1 ? .warning : .debug
                    self.logger.log(level: level, "cannot connect to redis; trying again", metadata: [
                        "redis": "\(endpoint)", "reason": "\(error)", "attempts": "\(state.machine.failures)",
                    ])
                    self.perform(action)
                }
            }
    }

    private func lost(_ connection: RedisConnection, _ reason: RedisError) {
        let state = box.value
        guard state.connection === connection else { return }
        state.connection = nil
        let action = state.machine.connectionLost(reason, jitter: Double.random(in: 0...1))
        guard action != .none else { return }
        logger.warning("lost the connection to redis; reconnecting", metadata: [
            "redis": "\(configuration.endpoint)", "reason": "\(reason)",
        ])
        perform(action)
    }
}
