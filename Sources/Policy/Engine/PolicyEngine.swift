import BLIPCore
import ReplicationNames

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
    /// Per `BLIPDirection.rawValue`, the rules that apply to that direction as plain bit masks.
    private let byDirection: [ContiguousArray<Prefilter>]
    /// The profile names the rules name (bit i of a mask is `profileNames[i]`).
    private let profileNames: ContiguousArray<String>
    /// The rules behind references, so reaching one does not copy its fields.
    private let compiled: ContiguousArray<CompiledRule>

    /// What is checked for every rule of the message's direction: trivial values, no references.
    struct Prefilter {
        var rule: Int
        /// Bit `MessageType.rawValue` set for each accepted type.
        var typeMask: UInt8
        /// Bit i set when `profileNames[i]` is accepted; all ones when no profile key is given.
        var profileMask: UInt64
        /// The rule names more profiles than there are mask bits: its list is checked afterwards.
        var profileOverflow: Bool
    }

    final class CompiledRule: Sendable {
        let rule: MessageRule
        let keys: CompiledMatch
        let needsBody: Bool
        init(_ rule: MessageRule) {
            self.rule = rule
            keys = CompiledMatch(rule.match)
            needsBody = rule.needsBody
        }
    }

    public init(rules: [MessageRule], state: PolicyState = PolicyState(), dryRun: Bool = false) {
        self.rules = rules
        self.state = state
        self.dryRun = dryRun
        compiled = ContiguousArray(rules.map(CompiledRule.init))
        var names: [String] = []
        for rule in rules { for name in rule.match.profiles ?? [] where !names.contains(name) { names.append(name) } }
        let maskable = Array(names.prefix(63))  // bit 63 stands for "no profile, or one no rule names"
        profileNames = ContiguousArray(maskable)
        byDirection = BLIPDirection.allCases.map { direction in
            ContiguousArray(rules.indices.compactMap { index -> Prefilter? in
                let match = rules[index].match
                guard match.direction == nil || match.direction == direction else { return nil }
                let types = match.types ?? MessageType.allCases
                let typeMask = types.reduce(UInt8(0)) { $0 | 1 << $1.rawValue }
                guard let profiles = match.profiles else {
                    return Prefilter(rule: index, typeMask: typeMask, profileMask: ~0, profileOverflow: false)
                }
                let overflow = profiles.contains { !maskable.contains($0) }
                let mask = overflow ? ~0 : profiles.reduce(UInt64(0)) { $0 | 1 << UInt64(maskable.firstIndex(of: $1)!) }
                return Prefilter(rule: index, typeMask: typeMask, profileMask: mask, profileOverflow: overflow)
            })
        }
    }

    /// The verdicts for one message. `now` is nanoseconds on the relay's monotonic clock.
    ///
    /// With `bodyRulesOnly`, only the rules with body keys are consulted: the second look at a
    /// message that a first evaluation (without its body) flagged ``PolicyVerdicts/needsBody``, so
    /// that the other rules' buckets and counts see the message once.
    public func evaluate(_ message: MessageFacts, session: SessionFacts, now: UInt64,
                         bodyRulesOnly: Bool = false) -> PolicyVerdicts {
        var result = PolicyVerdicts()
        let filters = byDirection[message.direction.rawValue]
        if filters.isEmpty { return result }
        let typeBit: UInt8 = 1 << message.type.rawValue
        let profile = profileNames.isEmpty ? nil : message.profile
        let profileBit = profileBit(profile)
        var lookups = MessageLookups()
        for filter in filters {
            guard filter.typeMask & typeBit != 0, filter.profileMask & profileBit != 0 else { continue }
            // Read through the reference, never `let rule = entry.rule`: copying a rule costs
            // a retain and release per field, the bulk of a non-matching rule's time.
            let entry = compiled[filter.rule]
            if bodyRulesOnly && !entry.needsBody { continue }
            if filter.profileOverflow {
                guard let profile, entry.rule.match.profiles?.contains(profile) == true else { continue }
            }
            guard entry.keys.matchesRest(message, session: session, lookups: &lookups) else { continue }
            if entry.needsBody {
                guard message.bodySize != nil else {
                    result.needsBody = true
                    continue
                }
                guard entry.rule.match.matchesBody(message) else { continue }
            }
            let rule = entry.rule
            guard let action = resolve(rule, message, session, now: now) else { continue }
            var verdict = PolicyVerdict(rule: rule.name, action: action, dryRun: dryRun || rule.dryRun)
            if case .rateLimit = rule.action { verdict.fromRateLimit = true }
            result.verdicts.append(verdict)
            if action.isTerminal { break }
        }
        return result
    }

    /// The mask bit of the message's profile: 0 when it has none or none of the rules names it
    /// (then only rules without a profile key, or with more profiles than bits, pass); the top
    /// bit is reserved so that "no profile key" (all ones) always passes.
    @inline(__always)
    private func profileBit(_ profile: String?) -> UInt64 {
        guard let profile else { return 1 << 63 }
        for index in profileNames.indices where profileNames[index] == profile { return 1 << UInt64(index) }
        return 1 << 63
    }

    /// Forgets the per-session counters of a finished session.
    public func sessionEnded(_ id: UInt64) { state.sessionEnded(id) }

    /// Applies `limit`, rolls `toxicity`, and turns the rule's action into this message's action;
    /// nil when the rule does nothing to it (limit reached, dice said no, within its rate).
    private func resolve(_ rule: MessageRule, _ message: MessageFacts, _ session: SessionFacts, now: UInt64) -> ResolvedAction? {
        state.withLock { state in
            if let limit = rule.limit, state.applied[rule.name, default: 0] >= limit { return nil }
            if rule.toxicity < 1, state.unit() >= rule.toxicity { return nil }
            guard let action = Self.action(rule, message, session, now: now, state: &state, fleet: self.state.fleet) else { return nil }
            state.applied[rule.name, default: 0] += 1
            return action
        }
    }

    private static func action(_ rule: MessageRule, _ message: MessageFacts, _ session: SessionFacts, now: UInt64,
                               state: inout PolicyState.Inner, fleet: (any FleetRateLimiting)?) -> ResolvedAction? {
        switch rule.action {
        case .deny(let reply):
            return refuse(message, reply) { .deny($0) }
        case .errorReply(let reply):
            return refuse(message, reply) { .errorReply($0) }
        case .filterChanges(let doc):
            guard message.type == .request, let profile = message.profile,
                  profile == ReplicationProfile.changes.rawValue || profile == ReplicationProfile.proposeChanges.rawValue
            else { return nil }
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
            return rateLimit(rule.name, limit, message, session, now: now, state: &state, fleet: fleet)
        case .close(let fault):
            return close(rule.name, fault, message, session, state: &state)
        }
    }

    /// A request is refused with `reply`, a NoReply one too: nobody gets the ERR then, but its
    /// status is what the relay's `norev` for a refused `rev` tells the receiver (Sync Gateway's
    /// revs are NoReply). A reply or an error is dropped.
    private static func refuse(_ message: MessageFacts, _ reply: ErrorReply,
                               _ make: (ErrorReply) -> ResolvedAction) -> ResolvedAction {
        message.type == .request ? make(reply) : .drop
    }

    private static func rateLimit(_ rule: String, _ limit: RateLimit, _ message: MessageFacts, _ session: SessionFacts,
                                  now: UInt64, state: inout PolicyState.Inner, fleet: (any FleetRateLimiting)?) -> ResolvedAction? {
        let keyValue: String
        switch limit.key {
        case .session: keyValue = "session:\(session.id)"
        case .user: keyValue = "user:" + (session.user ?? "")
        case .clientIP: keyValue = "ip:" + session.clientIP
        case .global: keyValue = "global"
        }
        var wait: UInt64 = 0
        var short = false
        var refused = false
        func spend(_ bucket: String, rate: Double, capacity: Double, cost: Double) {
            if limit.scope == .fleet, let fleet {
                // The relay's share of the fleet's bucket, answered from memory (docs/redis.md).
                let asked = FleetSpend(rule: rule, bucket: bucket + keyValue, rate: rate, burst: capacity, cost: cost,
                                       onExceed: limit.onExceed)
                switch fleet.spend(asked, now: now) {
                case .granted: break
                case .wait(let nanoseconds): wait = max(wait, nanoseconds); short = short || nanoseconds > 0
                case .refused: refused = true; short = true
                }
                return
            }
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
        if refused { return refuse(message, ErrorReply(code: 429, message: "rate limit exceeded")) { .deny($0) } }
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
