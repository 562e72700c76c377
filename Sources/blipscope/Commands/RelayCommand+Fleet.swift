import FleetLimits
import Foundation
import Logging
import NIOCore
import NIOPosix
import RedisClient

extension RelayCommand {
    /// `--redis` and `--redis-ca`, checked before anything starts; nil without `--redis`.
    func redisOptions() throws -> RedisConfiguration? {
        guard let redis else {
            if let redisCa { throw CommandFailure(cause: "--redis-ca \(redisCa) goes with --redis", hint: "give --redis rediss://HOST:PORT too") }
            return nil
        }
        let endpoint: RedisEndpoint
        do {
            endpoint = try RedisEndpoint(url: redis)
        } catch {
            let (url, reason) = error.invalidURL ?? (redis, "\(error)")
            throw CommandFailure(cause: "--redis \(url): \(reason)", hint: "give redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://…")
        }
        if let redisCa {
            guard endpoint.usesTLS else {
                throw CommandFailure(cause: "--redis-ca \(redisCa) goes with a rediss:// URL", hint: "give --redis rediss://HOST:PORT, or no --redis-ca")
            }
            _ = try OptionCheck.readableFile(redisCa, option: "--redis-ca", holding: "PEM file of the CA certificates that signed Redis's certificate")
        }
        var limits = RedisLimits.default
        limits.commandTimeout = .nanoseconds(Int64(FleetLimitsConfiguration(relayID: "").redisTimeout))
        let configuration = RedisConfiguration(endpoint: endpoint, tls: RedisTLS(caFilePath: redisCa), limits: limits)
        if endpoint.usesTLS {
            do { _ = try configuration.tls.makeContext() } catch {
                throw CommandFailure(cause: "--redis-ca \(redisCa ?? "(system roots)"): \(error)", hint: "give the PEM file of the CA certificates")
            }
        }
        return configuration
    }

    /// The fleet limits over a Redis client that connects in the background.
    static func fleetLimiter(_ redis: RedisConfiguration, logger: Logger,
                             report: @escaping @Sendable (FleetModeChange) -> Void) throws -> FleetLimiter {
        let client = try RedisClient(configuration: redis, logger: logger)
        client.start()
        let relayID = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
        return FleetLimiter(configuration: FleetLimitsConfiguration(relayID: relayID), redis: client, eventLoop: client.eventLoop,
                            logger: logger, report: report)
    }
}
