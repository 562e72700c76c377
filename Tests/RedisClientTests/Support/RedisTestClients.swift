import BLIPTestSupport
import Logging
import NIOCore
import Testing
@testable import RedisClient

/// Clients and connections for tests, with bounded waits and limits a busy machine meets.
enum RedisTestClients {
    static let quiet = Logger(label: "test.redis") { _ in SwiftLogNoOpLogHandler() }

    /// Generous timeouts: a test that wants a timeout sets its own.
    static func limits(commandTimeout: TimeAmount = .seconds(30), connectTimeout: TimeAmount = .seconds(30),
                       maxPendingCommands: Int = RedisLimits.default.maxPendingCommands) -> RedisLimits {
        RedisLimits(maxPendingCommands: maxPendingCommands, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
    }

    static func configuration(_ url: String, tls: RedisTLS = RedisTLS(), limits: RedisLimits = limits()) throws -> RedisConfiguration {
        try RedisConfiguration(url: url, tls: tls, limits: limits, backoff: RedisBackoff(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200)))
    }

    /// A started client, connected (within 30 s), handed to `body` and shut down after it,
    /// whether it threw or not.
    static func withClient<T: Sendable>(_ configuration: RedisConfiguration, logger: Logger = quiet,
                                        _ body: (RedisClient) async throws -> T) async throws -> T {
        let client = try RedisClient(configuration: configuration, logger: logger)
        client.start()
        do {
            try await client.waitForConnection(within: .seconds(30))
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// A connection handed to `body` and closed after it.
    static func withConnection<T: Sendable>(_ configuration: RedisConfiguration,
                                            _ body: (RedisConnection) async throws -> T) async throws -> T {
        let connection = try await RedisConnection.connect(configuration: configuration)
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Whether `redis` answers PING once it has reconnected: a reconnection made while the server
    /// could not answer may be cut by its own timeout, so a few tries, each bounded, find the one
    /// that holds.
    static func answersAfterReconnecting(_ redis: RedisClient) async throws -> Bool {
        try await redis.waitForConnection(within: .seconds(60))
        for _ in 0..<50 {
            if (try? await redis.ping()) == "PONG" { return true }
            try await redis.waitForConnection(within: .seconds(60))
        }
        return false
    }

    /// The ``RedisError`` `body` throws, or nil (any other error is recorded as an issue).
    static func error(_ body: () async throws -> Void) async -> RedisError? {
        do {
            try await body()
            return nil
        } catch let error as RedisError {
            return error
        } catch {
            Issue.record("not a RedisError: \(error)")
            return nil
        }
    }
}
