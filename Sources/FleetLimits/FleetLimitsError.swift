import RedisClient

/// The FleetLimits module's one error: Redis answered a fleet script with something else than
/// the script returns.
public struct FleetLimitsError: Error, Sendable, CustomStringConvertible {
    private enum Kind: Sendable {
        case unexpectedReply(script: String, reply: String)
    }

    private let kind: Kind

    static func unexpectedReply(script: String, _ reply: RESPValue) -> FleetLimitsError {
        FleetLimitsError(kind: .unexpectedReply(script: script, reply: "\(reply)"))
    }

    public var description: String {
        switch kind {
        case let .unexpectedReply(script, reply): "Redis answered the fleet's \(script) script with \(reply), not its reply"
        }
    }
}
