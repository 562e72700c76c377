/// Checks each client handshake against the connection rules (GitHub issue 7) and counts open
/// sessions. Thread-safe: every event loop admits through the same ``PolicyState`` lock.
///
/// Rules run in file order: `allow` admits at once; `deny`, `requireTLS`, `maxSessions` and
/// `handshakeRate` refuse when they apply, else the next rule is checked; past the last rule the
/// `default` decides. A refusal by a dry-run rule is remembered and checking goes on; if nothing
/// else refuses, that dry-run refusal is returned (the relay logs it and admits).
///
/// `maxSessions` counts sessions admitted and not yet closed: per user (anonymous sessions are
/// not counted per user), per client IP, in total. `handshakeRate` keeps a token bucket per
/// client IP (its token is spent even if a later rule refuses). A `maxSessions` rule with
/// `scope: fleet` is not checked here when the state has a fleet: the relay asks the fleet
/// (``fleetSessionClaims(_:)``) once these rules admitted the handshake.
public final class ConnectionPolicy: Sendable {
    public let rules: [ConnectionRule]
    public let defaultAllows: Bool
    public let dryRun: Bool
    let state: PolicyState

    public init(rules: [ConnectionRule], defaultAllows: Bool = true, state: PolicyState = PolicyState(), dryRun: Bool = false) {
        self.rules = rules
        self.defaultAllows = defaultAllows
        self.state = state
        self.dryRun = dryRun
    }

    /// Bucket-table name of a connection rule's handshake buckets (apart from message rules').
    static func bucketName(_ rule: String) -> String { "connection:" + rule }

    /// Decides one handshake and, when the session goes ahead, counts it as open.
    public func admit(_ facts: HandshakeFacts, now: UInt64) -> ConnectionVerdict {
        state.withLock { state in
            var wouldRefuse: ConnectionRefusal?
            var verdict = ConnectionVerdict.allow
            ruleLoop: for rule in rules where rule.match.matches(facts) {
                if case .allow = rule.action { break ruleLoop }
                guard var refusal = Self.refusal(rule, facts, now: now, state: &state, fleet: self.state.fleetSessions != nil)
                else { continue }
                if dryRun || rule.dryRun {
                    refusal.dryRun = true
                    wouldRefuse = wouldRefuse ?? refusal
                    continue
                }
                verdict = .refuse(refusal)
                break ruleLoop
            }
            if case .allow = verdict, !defaultAllows, !Self.allowed(rules, facts) {
                verdict = .refuse(ConnectionRefusal(status: 403, retryAfter: nil, reason: "not allowed by any rule",
                                                    rule: "default", dryRun: dryRun))
            }
            if case .allow = verdict, let wouldRefuse { verdict = .refuse(wouldRefuse) }
            if verdict.admits { state.sessions.open(user: facts.user, ip: facts.clientIP) }
            return verdict
        }
    }

    /// A session admitted by ``admit(_:now:)`` has ended.
    public func sessionClosed(_ facts: HandshakeFacts) {
        state.withLock { $0.sessions.close(user: facts.user, ip: facts.clientIP) }
    }

    private static func allowed(_ rules: [ConnectionRule], _ facts: HandshakeFacts) -> Bool {
        rules.contains { rule in
            if case .allow = rule.action { return rule.match.matches(facts) }
            return false
        }
    }

    private static func refusal(_ rule: ConnectionRule, _ facts: HandshakeFacts, now: UInt64,
                                state: inout PolicyState.Inner, fleet: Bool) -> ConnectionRefusal? {
        func refuse(_ status: Int, _ retryAfter: Int?, _ reason: String) -> ConnectionRefusal {
            ConnectionRefusal(status: status, retryAfter: retryAfter, reason: reason, rule: rule.name, dryRun: false)
        }
        switch rule.action {
        case .allow:
            return nil
        case .deny(let status, let message):
            return refuse(status, nil, message)
        case .requireTLS:
            return facts.tls ? nil : refuse(403, nil, "TLS (wss) is required")
        case .maxSessions(let limits):
            // A fleet's count is the relay's to check, after these rules (fleetSessionClaims).
            if limits.scope == .fleet, fleet { return nil }
            let sessions = state.sessions
            if let total = limits.total, sessions.total >= total {
                return refuse(limits.status, limits.retryAfter, "\(total) sessions open (limit)")
            }
            if let perUser = limits.perUser, let user = facts.user, sessions.perUser[user, default: 0] >= perUser {
                return refuse(limits.status, limits.retryAfter, "user has \(perUser) sessions open (limit)")
            }
            if let perIP = limits.perIP, sessions.perIP[facts.clientIP, default: 0] >= perIP {
                return refuse(limits.status, limits.retryAfter, "client address has \(perIP) sessions open (limit)")
            }
            return nil
        case .handshakeRate(let perSecond, let burst):
            let key = RateLimiterTable.Key(rule: bucketName(rule.name), value: facts.clientIP)
            let wait = state.buckets.withBucket(key, rate: perSecond, capacity: burst, now: now) { $0.take(1, now: now) }
            guard wait > 0 else { return nil }
            let seconds = max(1, Int((Double(wait) / 1e9).rounded(.up)))
            return refuse(429, seconds, "too many handshakes from this address")
        }
    }
}
