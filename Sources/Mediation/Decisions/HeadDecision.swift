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
        /// Carry the message as a link of this many bytes per second would: each frame is held for
        /// its transfer time (``MediationPolicy/transferTime(of:travelling:bytesPerSecond:)``) and
        /// leaves when it is through, in order, so the receiver sees the message arrive at that
        /// rate and the relay holds only what the link has not carried yet (counted against
        /// ``MediationLimits/maxDelayedBytes``, never the whole message). A request holds later
        /// requests in its direction until its first frame has left (§4.3).
        case pace(bytesPerSecond: Int)
    }

    public var action: Action
    /// Who decided and as what, for logs and metrics.
    public var ruling: Ruling
    /// The rule that decided.
    public var rule: String? { ruling.rule }
    /// What the policy decided beside this message's fate (reported, or a close to carry out).
    public var asides = VerdictAsides()

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
    public static func pace(bytesPerSecond: Int, rule: String? = nil, kind: VerdictKind? = nil) -> HeadDecision {
        HeadDecision(.pace(bytesPerSecond: bytesPerSecond), rule: rule, kind: kind)
    }
}
