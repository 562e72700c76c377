import BLIPCore

/// Decides, per BLIP message, what the message rules do with it (GitHub issue 7).
///
/// Rules are compiled once (globs classified, regexes and CIDR blocks parsed) and split by the
/// direction they apply to. ``evaluate(_:session:now:)`` looks at the rules of the message's
/// direction only, checks type and profile first (the profile is read once per message), and
/// touches shared state only for a rule whose keys matched: a message that matches no rule costs
/// a few comparisons per rule, takes no lock and allocates nothing.
///
/// All matching rules act, in file order, until one is terminal (deny, drop, errorReply, an
/// immediate close): a denied message is not also delayed. Rules whose match has body keys
/// (sizes, attachments) or that count bytes are skipped while the body size is unknown and flag
/// ``PolicyVerdicts/needsBody`` so the relay asks again when the message is complete.
public final class PolicyEngine: Sendable {
    public let rules: [MessageRule]
    /// Also dry-run every rule (`--policy-dry-run`).
    public let dryRun: Bool
    let state: PolicyState
    /// Rule indices by `BLIPDirection.rawValue`.
    private let byDirection: [[Int]]
    private let readsProfile: Bool

    public init(rules: [MessageRule], state: PolicyState = PolicyState(), dryRun: Bool = false) {
        self.rules = rules
        self.state = state
        self.dryRun = dryRun
        byDirection = BLIPDirection.allCases.map { direction in
            rules.indices.filter { rules[$0].match.direction == nil || rules[$0].match.direction == direction }
        }
        readsProfile = rules.contains { $0.match.profiles != nil }
    }

    /// The verdicts for one message. `now` is nanoseconds on the relay's monotonic clock.
    public func evaluate(_ message: MessageFacts, session: SessionFacts, now: UInt64) -> PolicyVerdicts {
        var result = PolicyVerdicts()
        let candidates = byDirection[message.direction.rawValue]
        if candidates.isEmpty { return result }
        let profile = readsProfile ? message.profile : nil
        for index in candidates {
            let rule = rules[index]
            let match = rule.match
            if let types = match.types, !types.contains(message.type) { continue }
            if let profiles = match.profiles {
                guard let profile, profiles.contains(profile) else { continue }
            }
            guard match.matchesHead(message, session: session) else { continue }
            if rule.needsBody {
                guard message.bodySize != nil else {
                    result.needsBody = true
                    continue
                }
                guard match.matchesBody(message) else { continue }
            }
            guard let action = resolve(rule, message, session, now: now) else { continue }
            result.verdicts.append(PolicyVerdict(rule: rule.name, action: action, dryRun: dryRun || rule.dryRun))
            if action.isTerminal { break }
        }
        return result
    }

    /// Forgets the per-session counters of a finished session.
    public func sessionEnded(_ id: UInt64) { state.sessionEnded(id) }

    /// Applies `limit`, rolls `toxicity`, and turns the rule's action into this message's action;
    /// nil when the rule does nothing to it (limit reached, dice said no, within its rate).
    private func resolve(_ rule: MessageRule, _ message: MessageFacts, _ session: SessionFacts, now: UInt64) -> ResolvedAction? {
        state.withLock { state in
            if let limit = rule.limit, state.applied[rule.name, default: 0] >= limit { return nil }
            if rule.toxicity < 1, state.unit() >= rule.toxicity { return nil }
            guard let action = Self.action(rule, message, session, now: now, state: &state) else { return nil }
            state.applied[rule.name, default: 0] += 1
            return action
        }
    }

    private static func action(_ rule: MessageRule, _ message: MessageFacts, _ session: SessionFacts, now: UInt64,
                               state: inout PolicyState.Inner) -> ResolvedAction? {
        switch rule.action {
        case .deny(let reply):
            return refuse(message, reply) { .deny($0) }
        case .errorReply(let reply):
            return refuse(message, reply) { .errorReply($0) }
        case .filterChanges(let doc):
            guard message.type == .request, let profile = message.profile,
                  profile == "changes" || profile == "proposeChanges" else { return nil }
            return .filterChanges(doc: doc)
        case .delay(let range):
            return .delay(nanoseconds: state.pick(range))
        case .replyLatency(let range):
            guard message.type == .request, !message.noReply else { return nil }
            return .replyLatency(nanoseconds: state.pick(range))
        case .withholdAcks(let nanoseconds):
            return .withholdAcks(nanoseconds: nanoseconds)
        case .bandwidth(let rate):
            return .bandwidth(bytesPerSecond: rate)
        case .rateLimit(let limit):
            return rateLimit(rule.name, limit, message, session, now: now, state: &state)
        case .close(let fault):
            return close(rule.name, fault, message, session, state: &state)
        }
    }

    /// An ERR answers only a request that wants a reply; anything else is dropped.
    private static func refuse(_ message: MessageFacts, _ reply: ErrorReply,
                               _ make: (ErrorReply) -> ResolvedAction) -> ResolvedAction {
        message.type == .request && !message.noReply ? make(reply) : .drop
    }

    private static func rateLimit(_ rule: String, _ limit: RateLimit, _ message: MessageFacts, _ session: SessionFacts,
                                  now: UInt64, state: inout PolicyState.Inner) -> ResolvedAction? {
        let keyValue: String
        switch limit.key {
        case .session: keyValue = "session:\(session.id)"
        case .user: keyValue = "user:" + (session.user ?? "")
        case .clientIP: keyValue = "ip:" + session.clientIP
        case .global: keyValue = "global"
        }
        var wait: UInt64 = 0
        var short = false
        func spend(_ bucket: String, rate: Double, capacity: Double, cost: Double) {
            let key = RateLimiterTable.Key(rule: rule, value: bucket + keyValue)
            let needed = state.buckets.withBucket(key, rate: rate, capacity: capacity, now: now) { bucket in
                limit.onExceed == .delay ? bucket.reserve(cost, now: now) : bucket.take(cost, now: now)
            }
            wait = max(wait, needed)
            short = short || needed > 0
        }
        if let perSecond = limit.perSecond { spend("messages|", rate: perSecond, capacity: limit.burst, cost: 1) }
        if let bytesPerSecond = limit.bytesPerSecond {
            spend("bytes|", rate: bytesPerSecond, capacity: limit.burstBytes, cost: Double(message.bodySize ?? 0))
        }
        guard short else { return nil }
        switch limit.onExceed {
        case .delay: return .delay(nanoseconds: wait)
        case .deny: return refuse(message, ErrorReply(code: 429, message: "rate limit exceeded")) { .deny($0) }
        }
    }

    private static func close(_ rule: String, _ fault: CloseFault, _ message: MessageFacts, _ session: SessionFacts,
                              state: inout PolicyState.Inner) -> ResolvedAction? {
        guard fault.isCounted else { return .close(code: fault.code, reason: fault.reason, afterForwarding: false) }
        let key = PolicyState.SessionRuleKey(rule: rule, session: session.id)
        var counter = state.closeCounters[key] ?? PolicyState.CloseCounter()
        defer { state.closeCounters[key] = counter }
        guard !counter.fired else { return nil }
        counter.messages += 1
        counter.bytes += message.bodySize ?? 0
        let reached = (fault.afterMessages.map { counter.messages >= $0 } ?? false)
            || (fault.afterBytes.map { counter.bytes >= $0 } ?? false)
        guard reached else { return nil }
        counter.fired = true
        return .close(code: fault.code, reason: fault.reason, afterForwarding: true)
    }
}
