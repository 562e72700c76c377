import NIOCore

/// A time to live, in the unit Redis is told it in: `EX`/`EXPIRE` (seconds) or `PX`/`PEXPIRE`
/// (milliseconds).
public enum RedisExpiration: Sendable, Hashable {
    case seconds(Int64)
    case milliseconds(Int64)
}

/// When SET writes: always, only if the key is absent (`NX`), only if it exists (`XX`).
public enum RedisSetCondition: Sendable, Hashable {
    case always
    case ifAbsent
    case ifPresent
}

/// A Lua script and its SHA-1, as `SCRIPT LOAD` answered it; run with
/// ``RedisCommandSending/evaluate(_:keys:arguments:)``.
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// Lower-case hex SHA-1 of ``source``, the name EVALSHA calls it by.
    public let sha1: String

    public init(source: String, sha1: String) {
        self.source = source
        self.sha1 = sha1
    }
}

/// The server's clock (TIME): seconds since the Unix epoch and microseconds into the second.
/// The same clock for every relay of a fleet, unlike their own.
public struct RedisServerTime: Sendable, Hashable {
    public let seconds: Int64
    public let microseconds: Int64

    public init(seconds: Int64, microseconds: Int64) {
        self.seconds = seconds
        self.microseconds = microseconds
    }

    /// Milliseconds since the Unix epoch.
    public var milliseconds: Int64 { seconds * 1000 + microseconds / 1000 }
}
