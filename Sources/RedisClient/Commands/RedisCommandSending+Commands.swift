import NIOCore

/// The commands the relay's fleet features use, each decoded into a typed value. A reply of
/// another shape throws ``RedisError/Code/unexpectedReply``.
extension RedisCommandSending {
    /// PING; the server's answer (`PONG`).
    public func ping() async throws(RedisError) -> String {
        let reply = try await send(RESPCommand("PING"))
        guard let text = reply.string else { throw .unexpectedReply(to: "PING", reply) }
        return text
    }

    /// GET: the value, or nil when the key does not exist.
    public func get(_ key: String) async throws(RedisError) -> ByteBuffer? {
        let reply = try await send(RESPCommand("GET", key))
        if reply.isNull { return nil }
        guard let bytes = reply.bytes else { throw .unexpectedReply(to: "GET", reply) }
        return bytes
    }

    /// SET with an optional time to live (`EX`/`PX`) and condition (`NX`/`XX`): whether the
    /// value was written (false when the condition kept it from being).
    @discardableResult
    public func set(_ key: String, to value: ByteBuffer, expiration: RedisExpiration? = nil,
                    condition: RedisSetCondition = .always) async throws(RedisError) -> Bool {
        var command = RESPCommand("SET", [ByteBuffer(string: key), value])
        switch expiration {
        case let .seconds(seconds)?: command.append("EX"); command.append(seconds)
        case let .milliseconds(milliseconds)?: command.append("PX"); command.append(milliseconds)
        case nil: break
        }
        switch condition {
        case .always: break
        case .ifAbsent: command.append("NX")
        case .ifPresent: command.append("XX")
        }
        let reply = try await send(command)
        if reply.isNull { return false }
        guard reply == .simpleString("OK") else { throw .unexpectedReply(to: "SET", reply) }
        return true
    }

    /// SET of a text value.
    @discardableResult
    public func set(_ key: String, to value: String, expiration: RedisExpiration? = nil,
                    condition: RedisSetCondition = .always) async throws(RedisError) -> Bool {
        try await set(key, to: ByteBuffer(string: value), expiration: expiration, condition: condition)
    }

    /// DEL: how many of the keys existed.
    @discardableResult
    public func del(_ keys: [String]) async throws(RedisError) -> Int64 {
        try await integer(RESPCommand("DEL", keys.map { ByteBuffer(string: $0) }))
    }

    /// INCRBY: the counter's value after adding `amount` (negative to subtract).
    public func incrby(_ key: String, by amount: Int64) async throws(RedisError) -> Int64 {
        try await integer(RESPCommand("INCRBY", key, String(amount)))
    }

    /// EXPIRE or PEXPIRE: whether the key exists (and now has the time to live).
    @discardableResult
    public func expire(_ key: String, after expiration: RedisExpiration) async throws(RedisError) -> Bool {
        let command = switch expiration {
        case let .seconds(seconds): RESPCommand("EXPIRE", key, String(seconds))
        case let .milliseconds(milliseconds): RESPCommand("PEXPIRE", key, String(milliseconds))
        }
        return try await integer(command) == 1
    }

    /// TIME: the server's clock.
    public func time() async throws(RedisError) -> RedisServerTime {
        let reply = try await send(RESPCommand("TIME"))
        guard let parts = reply.array, parts.count == 2, let seconds = parts[0].integer, let microseconds = parts[1].integer else {
            throw .unexpectedReply(to: "TIME", reply)
        }
        return RedisServerTime(seconds: seconds, microseconds: microseconds)
    }

    /// SCRIPT LOAD: the script, named by the SHA-1 the server computed.
    public func scriptLoad(_ source: String) async throws(RedisError) -> RedisScript {
        let reply = try await send(RESPCommand("SCRIPT", "LOAD", source))
        guard let sha1 = reply.string, sha1.utf8.count == 40 else { throw .unexpectedReply(to: "SCRIPT LOAD", reply) }
        return RedisScript(source: source, sha1: sha1)
    }

    /// EVALSHA of a loaded script; when the server no longer has it (NOSCRIPT: it restarted,
    /// or SCRIPT FLUSH), EVAL with the source, which also loads it again. The script's reply.
    public func evaluate(_ script: RedisScript, keys: [String] = [], arguments: [ByteBuffer] = []) async throws(RedisError) -> RESPValue {
        let rest = [ByteBuffer(string: String(keys.count))] + keys.map { ByteBuffer(string: $0) } + arguments
        do {
            return try await send(RESPCommand("EVALSHA", [ByteBuffer(string: script.sha1)] + rest))
        } catch where error.isServerError("NOSCRIPT") {
            return try await send(RESPCommand("EVAL", [ByteBuffer(string: script.source)] + rest))
        }
    }

    /// ``evaluate(_:keys:arguments:)`` with text arguments.
    public func evaluate(_ script: RedisScript, keys: [String] = [], arguments: [String]) async throws(RedisError) -> RESPValue {
        try await evaluate(script, keys: keys, arguments: arguments.map { ByteBuffer(string: $0) })
    }

    /// A command whose reply is an integer.
    func integer(_ command: RESPCommand) async throws(RedisError) -> Int64 {
        let reply = try await send(command)
        guard case let .integer(value) = reply else { throw .unexpectedReply(to: command.name, reply) }
        return value
    }
}
