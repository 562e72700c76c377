import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One connection to a Redis server: TCP or TLS, logged in (AUTH) and on its database (SELECT),
/// with any number of commands in flight (pipelining), their replies matched in order.
///
/// Made with ``connect(configuration:sslContext:on:)``; it does not reconnect (``RedisClient``
/// does). Once it has ended (the server closed it, it broke a limit or the protocol, a command
/// timed out, or ``close()`` was called) every command fails at once, with the reason.
public final class RedisConnection: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    private let channel: any Channel
    /// Completes, once the connection has ended, with why it did.
    let ended: EventLoopFuture<RedisError>

    private init(configuration: RedisConfiguration, channel: any Channel, ended: EventLoopFuture<RedisError>) {
        self.configuration = configuration
        self.channel = channel
        self.ended = ended
    }

    /// The event loop the connection runs on.
    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Whether the connection still takes commands.
    public var isOpen: Bool { channel.isActive }

    /// Connects, logs in and selects the database, each step bounded by
    /// ``RedisLimits/connectTimeout``. `sslContext`, for `rediss://`, is made from
    /// ``RedisConfiguration/tls`` when not given.
    public static func connect(configuration: RedisConfiguration, sslContext: NIOSSLContext? = nil,
                               on eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) async throws(RedisError) -> RedisConnection {
        var context = sslContext
        if configuration.endpoint.usesTLS, context == nil { context = try configuration.tls.makeContext() }
        return try await RedisError.awaiting(connect(configuration: configuration, sslContext: context, on: eventLoop))
    }

    /// ``connect(configuration:sslContext:on:)`` as a future; `sslContext` is required for TLS.
    static func connect(configuration: RedisConfiguration, sslContext: NIOSSLContext?,
                        on eventLoop: any EventLoop) -> EventLoopFuture<RedisConnection> {
        let endpoint = configuration.endpoint
        let limits = configuration.limits
        let ended = eventLoop.makePromise(of: RedisError.self)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(limits.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        // A DNS name is checked against the certificate and sent as SNI; with no
                        // name NIOSSL checks the certificate against the peer's IP address.
                        let isAddress = (try? SocketAddress(ipAddress: endpoint.host, port: 0)) != nil
                        let name = isAddress ? nil : endpoint.host
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    try sync.addHandler(RedisChannelHandler(limits: limits, ended: ended))
                }
            }
        return bootstrap.connect(host: endpoint.host, port: endpoint.port)
            .flatMapErrorThrowing { error in
                ended.succeed(.closed("the connection was never made"))
                throw RedisError.connectFailed(endpoint, reason: "\(error)")
            }
            .flatMap { channel in
                let connection = RedisConnection(configuration: configuration, channel: channel, ended: ended.futureResult)
                return connection.handshake().map { connection }.flatMapError { error in
                    channel.close(promise: nil)
                    return eventLoop.makeFailedFuture(error)
                }
            }
    }

    /// AUTH (when the endpoint has a password), SELECT (when its database is not 0), then PING,
    /// pipelined; a PING answered means the server is there, logged in, and answering.
    private func handshake() -> EventLoopFuture<Void> {
        let endpoint = configuration.endpoint
        let timeout = configuration.limits.connectTimeout
        var steps: [EventLoopFuture<RESPValue>] = []
        if let password = endpoint.password {
            let auth = endpoint.user.map { RESPCommand("AUTH", $0, password) } ?? RESPCommand("AUTH", password)
            steps.append(send(auth, timeout: timeout))
        }
        if endpoint.database != 0 { steps.append(send(RESPCommand("SELECT", String(endpoint.database)), timeout: timeout)) }
        steps.append(send(RESPCommand("PING"), timeout: timeout))
        return EventLoopFuture.whenAllComplete(steps, on: eventLoop).flatMapThrowing { results in
            for result in results {
                guard case let .failure(failure) = result else { continue }
                let error = failure as? RedisError ?? .closed("\(failure)")
                if let message = error.serverMessage,
                   error.isServerError("WRONGPASS") || error.isServerError("NOAUTH") || message.contains("AUTH") {
                    throw RedisError.authenticationFailed(endpoint, message: message)
                }
                throw RedisError.connectFailed(endpoint, reason: error.description)
            }
        }
    }

    public func send(_ command: RESPCommand) async throws(RedisError) -> RESPValue {
        try await RedisError.awaiting(send(command, timeout: configuration.limits.commandTimeout))
    }

    /// Writes `command` and returns its reply to come; an error reply is a failed future.
    func send(_ command: RESPCommand, timeout: TimeAmount) -> EventLoopFuture<RESPValue> {
        let reply = channel.eventLoop.makePromise(of: RESPValue.self)
        let written = channel.eventLoop.makePromise(of: Void.self)
        // The handler fails a write it refuses with the reply's own error. A channel that has
        // closed and dropped its handlers fails the write without them; it has ended by then
        // (or ends at once, after a socket error), and the command fails with the reason.
        written.futureResult.whenFailure { [ended] error in
            if let error = error as? RedisError {
                reply.fail(error)
            } else {
                ended.whenSuccess { reason in reply.fail(reason) }
            }
        }
        channel.writeAndFlush(RedisRequest(command: command, timeout: timeout, reply: reply), promise: written)
        return reply.futureResult
    }

    /// Why the connection ended, once it has.
    public func endReason() async -> RedisError {
        (try? await ended.get()) ?? .closed("unknown")
    }

    /// Closes the connection; commands in flight fail with ``RedisError/Code/shutDown``.
    public func close() async {
        try? await channel.close()
    }
}
