import BLIPCore
/// What one rule decided for one message, with the rate limits, random ranges and toxicity
/// already resolved: the relay only carries it out (or, for a dry-run verdict, logs it).
public struct PolicyVerdict: Sendable, CustomStringConvertible {
    public var rule: String
    public var action: ResolvedAction
    /// Log it, do not do it (`--policy-dry-run`, or the rule's `dryRun: true`).
    public var dryRun: Bool
    /// The rule is a `rateLimit` (its `delay` or `deny` is the bucket's doing).
    public var fromRateLimit = false

    public var description: String { "\(rule): \(action)\(dryRun ? " (dry run)" : "")" }
}

/// A rule's action for one particular message.
public enum ResolvedAction: Sendable, CustomStringConvertible {
    /// Answer the request with ERR (domain, code, message); do not forward it.
    case deny(ErrorReply)
    /// Do not forward and do not answer (a denied noreply request, or a denied reply).
    case drop
    /// Remove `changes`/`proposeChanges` entries whose document ID matches; answer them to their
    /// sender as not wanted.
    case filterChanges(doc: TextPattern)
    /// Hold the message this long before forwarding (later requests that way wait behind it).
    case delay(nanoseconds: UInt64)
    /// Answer with this error instead of forwarding (fault injection).
    case errorReply(ErrorReply)
    /// Close the WebSocket with `code` (1006: drop TCP without a CLOSE frame). When
    /// `afterForwarding`, the message is forwarded first (a counted close).
    case close(code: UInt16, reason: String, afterForwarding: Bool)
    /// Do not pass on ACKs of this message for this long.
    case withholdAcks(nanoseconds: UInt64)
    /// Hold the reply to this request back this long.
    case replyLatency(nanoseconds: UInt64)
    /// Forward this message no faster than this.
    case bandwidth(bytesPerSecond: Int)

    /// Whether the message is not forwarded at all (later rules are not consulted).
    public var isTerminal: Bool {
        switch self {
        case .deny, .drop, .errorReply: true
        case .close(_, _, let afterForwarding): !afterForwarding
        default: false
        }
    }

    public var description: String {
        switch self {
        case .deny(let reply): "deny \(reply.domain) \(reply.code) \"\(reply.message)\""
        case .drop: "drop"
        case .filterChanges(let doc): "filterChanges doc \(doc)"
        case .delay(let ns): "delay \(Self.show(ns))"
        case .errorReply(let reply): "errorReply \(reply.domain) \(reply.code) \"\(reply.message)\""
        case .close(let code, let reason, let after): "close \(code) \"\(reason)\"\(after ? " after forwarding" : "")"
        case .withholdAcks(let ns): "withholdAcks \(Self.show(ns))"
        case .replyLatency(let ns): "replyLatency \(Self.show(ns))"
        case .bandwidth(let rate): "bandwidth \(rate) B/s"
        }
    }

    static func show(_ nanoseconds: UInt64) -> String {
        nanoseconds >= 1_000_000_000 ? "\(Double(nanoseconds) / 1e9)s" : "\(Double(nanoseconds) / 1e6)ms"
    }
}

/// Every verdict for one message, in rule order, and whether some rule still waits for the
/// complete message (``needsBody``): the relay then asks again with the body size known.
public struct PolicyVerdicts: Sendable {
    public var verdicts: [PolicyVerdict] = []
    /// A rule matched on everything but its body keys (sizes, attachments, byte rates).
    public var needsBody = false

    public init() {}

    /// Nothing to do and nothing to wait for: forward as usual.
    public var isEmpty: Bool { verdicts.isEmpty && !needsBody }

    /// The verdicts to carry out (dry-run ones are only logged).
    public var enforced: [PolicyVerdict] { verdicts.filter { !$0.dryRun } }
}
