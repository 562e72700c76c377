/// One entry of the policy file's `connections.rules:` list, checked in order at each client's
/// WebSocket handshake (before the upstream is dialed).
public struct ConnectionRule: Sendable {
    public var name: String
    public var match: ConnectionMatch
    public var action: ConnectionAction
    /// Log what the rule would do, refuse nothing.
    public var dryRun: Bool
}

/// The `match:` of a connection rule; all keys given must match, none given matches all.
public struct ConnectionMatch: Sendable {
    public var clientIP: [CIDRBlock]?
    /// An anonymous client never matches a user pattern.
    public var user: TextPattern?
    public var database: TextPattern?
    /// Matches when any offered sub-protocol matches (`BLIP_3+CBMobile_2`).
    public var subprotocol: TextPattern?
    /// `tls: false` matches plain ws clients, `true` wss clients.
    public var tls: Bool?

    public init() {}

    public func matches(_ facts: HandshakeFacts) -> Bool {
        if let clientIP {
            guard let address = facts.clientAddress, clientIP.contains(where: { $0.contains(address) }) else { return false }
        }
        if let user {
            guard let name = facts.user, user.matches(name) else { return false }
        }
        if let database, !database.matches(facts.database) { return false }
        if let subprotocol, !facts.offeredSubprotocols.contains(where: { subprotocol.matches($0) }) { return false }
        if let tls, tls != facts.tls { return false }
        return true
    }
}

/// What a connection rule does with a handshake it matches.
public enum ConnectionAction: Sendable {
    /// Admit now: later rules are not checked.
    case allow
    /// Refuse with this status (default 403) and message.
    case deny(status: Int, message: String)
    /// Refuse a plain ws client with 403.
    case requireTLS
    /// Refuse once as many sessions are open (total, per user, per client IP).
    case maxSessions(SessionLimits)
    /// A token bucket per client IP on handshakes; refused with 429 and Retry-After.
    case handshakeRate(perSecond: Double, burst: Double)
}

/// `maxSessions:` — any of the three limits, the refusal status (429 or 503) and Retry-After.
public struct SessionLimits: Sendable, Equatable {
    public var total: Int?
    public var perUser: Int?
    public var perIP: Int?
    public var status: Int
    public var retryAfter: Int
    /// `local`: sessions open on this relay; `fleet`: on every relay sharing the `--redis`.
    public var scope: LimitScope = .local
}

extension ConnectionRule {
    static let keys: Set<String> = ["name", "match", "allow", "deny", "requireTLS", "maxSessions", "handshakeRate", "dryRun"]
    static let actions: Set<String> = ["allow", "deny", "requireTLS", "maxSessions", "handshakeRate"]

    init(parsing node: PolicyNode) throws(PolicyError) {
        let map = try node.mapping(allowed: Self.keys)
        name = try map.required("name").nonEmptyString()
        dryRun = try map["dryRun"]?.bool() ?? false
        match = try map["match"].map { value throws(PolicyError) in try ConnectionMatch(parsing: value) } ?? ConnectionMatch()
        let chosen = map.entries.filter { Self.actions.contains($0.0) }
        guard chosen.count == 1, let (actionName, value) = chosen.first else {
            throw node.fail(chosen.isEmpty ? "names no action (one of: \(Self.actions.sorted().joined(separator: ", ")))"
                                           : "names \(chosen.count) actions; a rule has exactly one")
        }
        switch actionName {
        case "allow", "requireTLS":
            guard try value.bool() else { throw value.fail("must be true (remove the rule to turn it off)") }
            action = actionName == "allow" ? .allow : .requireTLS
        case "deny":
            if value.isMapping {
                let deny = try value.mapping(allowed: ["status", "message"])
                let status = try deny["status"]?.integer(min: 400) ?? 403
                guard status <= 599 else { throw try deny.required("status").fail("must be an HTTP error status 400…599") }
                action = .deny(status: status, message: try deny["message"]?.string() ?? "refused by policy")
            } else {
                guard try value.bool() else { throw value.fail("must be true or a mapping with status and message") }
                action = .deny(status: 403, message: "refused by policy")
            }
        case "maxSessions":
            action = .maxSessions(try SessionLimits(parsing: value))
        default:
            let rate = try value.mapping(allowed: ["perSecond", "burst"])
            let perSecond = try rate.required("perSecond").positiveNumber()
            action = .handshakeRate(perSecond: perSecond, burst: try rate["burst"]?.positiveNumber() ?? max(1, perSecond))
        }
    }
}

extension ConnectionMatch {
    init(parsing node: PolicyNode) throws(PolicyError) {
        self.init()
        let map = try node.mapping(allowed: ["clientIP", "user", "database", "subprotocol", "tls"])
        clientIP = try map["clientIP"]?.cidrBlocks()
        user = try map["user"]?.pattern()
        database = try map["database"]?.pattern()
        subprotocol = try map["subprotocol"]?.pattern()
        tls = try map["tls"]?.bool()
    }
}

extension SessionLimits {
    init(parsing node: PolicyNode) throws(PolicyError) {
        let map = try node.mapping(allowed: ["total", "perUser", "perIP", "status", "retryAfter", "scope"])
        total = try map["total"]?.integer(min: 1)
        perUser = try map["perUser"]?.integer(min: 1)
        perIP = try map["perIP"]?.integer(min: 1)
        guard total != nil || perUser != nil || perIP != nil else { throw node.fail("give total, perUser and/or perIP") }
        status = try map["status"]?.integer(min: 0) ?? 503
        guard status == 429 || status == 503 else { throw try map.required("status").fail("must be 429 or 503 (statuses clients retry)") }
        retryAfter = Int(try map["retryAfter"]?.duration() ?? 5_000_000_000) / 1_000_000_000
        guard retryAfter >= 1 else { throw try map.required("retryAfter").fail("must be at least 1s") }
        scope = try LimitScope(parsing: map["scope"])
    }
}
