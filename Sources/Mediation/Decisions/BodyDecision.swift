import BLIPCore
import NIOCore

/// The policy's verdict on a complete message it asked to see with ``HeadDecision/Action/awaitBody``.
public struct BodyDecision: Sendable {
    public enum Action: Sendable {
        /// Forward the message as it came.
        case pass
        /// Swallow it and answer the requester with this ERR (nothing for a NoReply request).
        case deny(ErrorReply)
        /// Swallow it; nobody answers.
        case drop
        /// Forward this instead. For a request, `replyRewrite` maps the receiver's reply back to
        /// what the original request's sender expects (``ChangesFilter`` builds one).
        case replace(properties: Properties, body: ByteBuffer, compressed: Bool, replyRewrite: ReplyRewrite?)
        /// The relay answers the request itself with a RPY; the receiver never sees the request.
        case answer(properties: Properties, body: ByteBuffer)
        /// Forward it after this long (later requests in its direction wait behind it).
        case delay(TimeAmount)
    }

    public var action: Action
    /// Who decided and as what, for logs and metrics.
    public var ruling: Ruling
    public var rule: String? { ruling.rule }
    /// What the policy decided beside this message's fate (reported, or a close to carry out).
    public var asides = VerdictAsides()

    public init(_ action: Action, rule: String? = nil, kind: VerdictKind? = nil, rateLimited: Bool = false) {
        self.action = action
        self.ruling = Ruling(rule: rule, kind: kind, rateLimited: rateLimited)
    }

    public init(_ action: Action, ruling: Ruling) {
        self.action = action
        self.ruling = ruling
    }

    public static let pass = BodyDecision(.pass)
}
