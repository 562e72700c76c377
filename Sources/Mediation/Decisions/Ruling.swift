/// What kind of intervention a verdict is, in the policy's own terms (the label of
/// `blipscope_policy_verdicts_total{action}`): a rule's ``VerdictKind`` travels typed from the
/// policy through the mediator's decision and report to the relay's events and metrics, never
/// as text to parse back.
public enum VerdictKind: String, Sendable, Equatable, CaseIterable {
    /// A refusal the policy means (`deny`, `readOnly`, a rate limit's `onExceed: deny`).
    case deny
    case drop
    /// A hold the policy means (`delay`, a rate limit's `onExceed: delay`).
    case delay
    /// The message was changed (`filterChanges`, a relay answer).
    case modify
    /// Fault injection (`errorReply`, `close`, `withholdAcks`, `replyLatency`, `bandwidth`).
    case fault
}

/// Who decided and as what: carried by a ``HeadDecision`` or ``BodyDecision`` into the
/// ``MediationReport`` of what the mediator did.
public struct Ruling: Sendable, Equatable {
    /// The rule's name, when the policy has one.
    public var rule: String?
    /// Nil: the kind follows from what was done (a deny is a deny…).
    public var kind: VerdictKind?
    /// The hold comes from a rate limit (its length is recorded as rate-limit delay).
    public var rateLimited: Bool

    public init(rule: String? = nil, kind: VerdictKind? = nil, rateLimited: Bool = false) {
        self.rule = rule
        self.kind = kind
        self.rateLimited = rateLimited
    }
}
