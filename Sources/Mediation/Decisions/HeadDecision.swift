import BLIPCore
import NIOCore

/// The policy's verdict on a message as soon as its properties are known.
public struct HeadDecision: Sendable {
    public enum Action: Sendable {
        /// Forward unchanged.
        case pass
        /// Swallow the request and answer its sender with this ERR once the request's last frame
        /// has arrived (LiteCore registers the reply only then, wire-format reference §4.4). A
        /// NoReply request is dropped silently. On a reply, the requester gets the ERR instead.
        case deny(ErrorReply)
        /// Swallow the message; nobody answers.
        case drop
        /// Hold the message (and, for a request, every later request in its direction, whose
        /// first frames may not overtake it, §4.3) for this long; replies and ACKs keep flowing.
        case delay(TimeAmount)
        /// Hold the message until it is complete, then ask ``MediationPolicy/decide(body:head:)``.
        case awaitBody
    }

    public var action: Action
    /// Who decided and as what, for logs and metrics.
    public var ruling: Ruling
    /// The rule that decided.
    public var rule: String? { ruling.rule }

    public init(_ action: Action, rule: String? = nil, kind: VerdictKind? = nil, rateLimited: Bool = false) {
        self.action = action
        self.ruling = Ruling(rule: rule, kind: kind, rateLimited: rateLimited)
    }

    public static let pass = HeadDecision(.pass)
    public static func deny(_ error: ErrorReply = ErrorReply(), rule: String? = nil, kind: VerdictKind? = nil) -> HeadDecision {
        HeadDecision(.deny(error), rule: rule, kind: kind)
    }
    public static func drop(rule: String? = nil) -> HeadDecision { HeadDecision(.drop, rule: rule) }
    public static func delay(_ amount: TimeAmount, rule: String? = nil, rateLimited: Bool = false) -> HeadDecision {
        HeadDecision(.delay(amount), rule: rule, rateLimited: rateLimited)
    }
    public static func awaitBody(rule: String? = nil) -> HeadDecision { HeadDecision(.awaitBody, rule: rule) }
}
