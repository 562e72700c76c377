import NIOCore

/// The commands of a registry of live sessions: a hash per session (its record, HSET/HGETALL,
/// with PEXPIRE as its heartbeat) and a sorted set of session IDs scored by when each expires
/// (ZADD to beat, ZREMRANGEBYSCORE to drop the expired, ZRANGEBYSCORE/ZCARD to list and count
/// the live ones), so counting needs no SCAN over the key space.
extension RedisCommandSending {
    /// HSET: how many of the fields are new.
    @discardableResult
    public func hset(_ key: String, fields: [(name: String, value: ByteBuffer)]) async throws(RedisError) -> Int64 {
        var command = RESPCommand("HSET", key)
        for field in fields {
            command.append(field.name)
            command.append(field.value)
        }
        return try await integer(command)
    }

    /// HGETALL: every field and its value (empty when the key does not exist).
    public func hgetall(_ key: String) async throws(RedisError) -> [String: ByteBuffer] {
        let reply = try await send(RESPCommand("HGETALL", key))
        guard let elements = reply.array, elements.count % 2 == 0 else { throw .unexpectedReply(to: "HGETALL", reply) }
        var fields: [String: ByteBuffer] = [:]
        for index in stride(from: 0, to: elements.count, by: 2) {
            guard let name = elements[index].string, let value = elements[index + 1].bytes else {
                throw .unexpectedReply(to: "HGETALL", reply)
            }
            fields[name] = value
        }
        return fields
    }

    /// ZADD: how many of the members are new (the others get their new score).
    @discardableResult
    public func zadd(_ key: String, members: [(score: Double, member: String)]) async throws(RedisError) -> Int64 {
        var command = RESPCommand("ZADD", key)
        for entry in members {
            command.append(double: entry.score)
            command.append(entry.member)
        }
        return try await integer(command)
    }

    /// ZREM: how many of the members were there.
    @discardableResult
    public func zrem(_ key: String, members: [String]) async throws(RedisError) -> Int64 {
        try await integer(RESPCommand("ZREM", [ByteBuffer(string: key)] + members.map { ByteBuffer(string: $0) }))
    }

    /// ZCARD: the number of members.
    public func zcard(_ key: String) async throws(RedisError) -> Int64 {
        try await integer(RESPCommand("ZCARD", key))
    }

    /// ZRANGEBYSCORE: the members scored from `min` to `max` (both included; ±infinity for no
    /// bound), lowest first, at most `limit` of them when given (LIMIT 0 limit): a listing that
    /// stays within ``RedisLimits/maxArrayElements``.
    public func zrangebyscore(_ key: String, min: Double, max: Double, limit: Int? = nil) async throws(RedisError) -> [String] {
        var command = RESPCommand("ZRANGEBYSCORE", key)
        command.append(double: min)
        command.append(double: max)
        if let limit {
            command.append("LIMIT")
            command.append("0")
            command.append(limit)
        }
        let reply = try await send(command)
        guard let elements = reply.array else { throw .unexpectedReply(to: "ZRANGEBYSCORE", reply) }
        var members: [String] = []
        members.reserveCapacity(elements.count)
        for element in elements {
            guard let member = element.string else { throw .unexpectedReply(to: "ZRANGEBYSCORE", reply) }
            members.append(member)
        }
        return members
    }

    /// ZREMRANGEBYSCORE: how many members scored from `min` to `max` (both included) were removed.
    @discardableResult
    public func zremrangebyscore(_ key: String, min: Double, max: Double) async throws(RedisError) -> Int64 {
        var command = RESPCommand("ZREMRANGEBYSCORE", key)
        command.append(double: min)
        command.append(double: max)
        return try await integer(command)
    }
}
