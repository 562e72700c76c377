import NIOCore

/// The one error type of the `RedisClient` module.
///
/// `description` is a sentence meant for a person; match on ``code`` in code. No error ever
/// carries a password: URLs and endpoints are quoted with their credentials redacted, and a
/// command is named by its name only, never by its arguments.
public struct RedisError: Error, CustomStringConvertible, Sendable, Hashable {
    /// What went wrong, without the details. Stable for programmatic matching.
    public enum Code: Sendable, Hashable {
        /// A `redis://` or `rediss://` URL could not be read.
        case invalidURL
        /// The TLS settings could not be loaded (a CA file missing or not PEM).
        case tlsConfigurationFailed
        /// No connection could be made: TCP, TLS, or the server refused the handshake.
        case connectFailed
        /// The server refused the credentials (AUTH) or requires some (NOAUTH).
        case authenticationFailed
        /// The client has no connection right now (it is between reconnection attempts).
        case notConnected
        /// A command got no reply within the command timeout.
        case timedOut
        /// The server answered with an error reply (`-ERR …`, `-NOSCRIPT …`).
        case serverError
        /// The server sent bytes that are not RESP2, or a reply no command was waiting for.
        case protocolViolation
        /// A reply or the command queue crossed one of ``RedisLimits``.
        case limitExceeded
        /// The connection closed while the command was in flight.
        case closed
        /// The client or connection was shut down by its owner.
        case shutDown
        /// A reply had a type or shape the command does not answer with.
        case unexpectedReply
    }

    private enum Base: Sendable, Hashable {
        case invalidURL(url: String, reason: String)
        case tlsConfigurationFailed(path: String, reason: String)
        case connectFailed(endpoint: String, reason: String)
        case authenticationFailed(endpoint: String, message: String)
        case notConnected(endpoint: String, lastFailure: String?)
        case timedOut(command: String, timeout: TimeAmount)
        case serverError(message: String)
        case protocolViolation(reason: String)
        case limitExceeded(what: String, limit: String, maximum: Int)
        case closed(reason: String)
        case shutDown
        case unexpectedReply(command: String, reply: String)
    }

    private let base: Base

    private init(_ base: Base) { self.base = base }

    /// For ``Code/invalidURL``: the URL as quoted (credentials redacted) and what is wrong with
    /// it, for a caller that words the error itself (the relay's `--redis`).
    public var invalidURL: (url: String, reason: String)? {
        if case let .invalidURL(url, reason) = base { return (url, reason) }
        return nil
    }

    static func invalidURL(_ redactedURL: String, _ reason: String) -> RedisError {
        RedisError(.invalidURL(url: redactedURL, reason: reason))
    }

    static func tlsConfigurationFailed(path: String, reason: String) -> RedisError {
        RedisError(.tlsConfigurationFailed(path: path, reason: reason))
    }

    static func connectFailed(_ endpoint: RedisEndpoint, reason: String) -> RedisError {
        RedisError(.connectFailed(endpoint: endpoint.description, reason: reason))
    }

    static func authenticationFailed(_ endpoint: RedisEndpoint, message: String) -> RedisError {
        RedisError(.authenticationFailed(endpoint: endpoint.description, message: message))
    }

    static func notConnected(_ endpoint: RedisEndpoint, lastFailure: RedisError?) -> RedisError {
        RedisError(.notConnected(endpoint: endpoint.description, lastFailure: lastFailure?.description))
    }

    static func timedOut(_ command: String, after timeout: TimeAmount) -> RedisError {
        RedisError(.timedOut(command: command, timeout: timeout))
    }

    static func serverError(_ message: String) -> RedisError { RedisError(.serverError(message: message)) }

    static func protocolViolation(_ reason: String) -> RedisError { RedisError(.protocolViolation(reason: reason)) }

    /// `what` is the thing that crossed the limit ("A bulk string of 9000000 bytes"), `limit`
    /// the name of the ``RedisLimits`` property.
    static func limitExceeded(_ what: String, limit: String, maximum: Int) -> RedisError {
        RedisError(.limitExceeded(what: what, limit: limit, maximum: maximum))
    }

    static func closed(_ reason: String) -> RedisError { RedisError(.closed(reason: reason)) }

    static let shutDown = RedisError(.shutDown)

    static func unexpectedReply(to command: String, _ reply: RESPValue) -> RedisError {
        RedisError(.unexpectedReply(command: command, reply: reply.summary))
    }

    public var code: Code {
        switch base {
        case .invalidURL: .invalidURL
        case .tlsConfigurationFailed: .tlsConfigurationFailed
        case .connectFailed: .connectFailed
        case .authenticationFailed: .authenticationFailed
        case .notConnected: .notConnected
        case .timedOut: .timedOut
        case .serverError: .serverError
        case .protocolViolation: .protocolViolation
        case .limitExceeded: .limitExceeded
        case .closed: .closed
        case .shutDown: .shutDown
        case .unexpectedReply: .unexpectedReply
        }
    }

    /// The server's error reply (`NOSCRIPT No matching script. …`) for ``Code/serverError`` and
    /// ``Code/authenticationFailed``; nil for the others.
    public var serverMessage: String? {
        switch base {
        case let .serverError(message), let .authenticationFailed(_, message): message
        default: nil
        }
    }

    /// Whether the error reply starts with `prefix`, Redis's error kind (`NOSCRIPT`, `WRONGTYPE`).
    public func isServerError(_ prefix: String) -> Bool {
        guard let message = serverMessage else { return false }
        return message == prefix || message.hasPrefix(prefix + " ")
    }

    public var description: String {
        switch base {
        case let .invalidURL(url, reason):
            "The redis URL \(url) \(reason)."
        case let .tlsConfigurationFailed(path, reason):
            "The TLS settings for redis could not be loaded from \(path): \(reason)."
        case let .connectFailed(endpoint, reason):
            "Could not connect to redis at \(endpoint): \(reason)."
        case let .authenticationFailed(endpoint, message):
            "Redis at \(endpoint) refused the connection's credentials: \(message)."
        case let .notConnected(endpoint, lastFailure?):
            "Not connected to redis at \(endpoint); the client is reconnecting. The last attempt failed: \(lastFailure)"
        case let .notConnected(endpoint, nil):
            "Not connected to redis at \(endpoint); the client is reconnecting."
        case let .timedOut(command, timeout):
            "Redis did not answer \(command) within \(Self.words(timeout)); the connection is closed and made again."
        case let .serverError(message):
            "Redis answered with an error: \(message)."
        case let .protocolViolation(reason):
            "Redis broke the protocol: \(reason); the connection is closed."
        case let .limitExceeded(what, limit, maximum):
            "\(what) is more than RedisLimits.\(limit) allows (\(maximum))."
        case let .closed(reason):
            "The connection to redis closed before the reply came: \(reason)."
        case .shutDown:
            "The redis client has been shut down."
        case let .unexpectedReply(command, reply):
            "Redis answered \(command) with \(reply), which is not a reply that command gives."
        }
    }

    /// A timeout in the unit a person would say it in.
    private static func words(_ amount: TimeAmount) -> String {
        let nanoseconds = amount.nanoseconds
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000) s" }
        return "\(nanoseconds / 1_000_000) ms"
    }
}
