import NIOCore
import NIOHTTP1
import Policy

extension HandshakeHandler {
    /// The HTTP answer to a handshake the connection rules refused: the rule's status, a
    /// `Retry-After` header for 429 and 503 (Couchbase Lite retries those later), and the rule
    /// and reason as a text body.
    static func refusal(for policy: ConnectionRefusal) -> Refusal {
        let reason = "refused by policy rule \"\(policy.rule)\": \(policy.reason)"
        var body = ByteBuffer()
        body.writeString(reason + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        if let retryAfter = policy.retryAfter, policy.status == 429 || policy.status == 503 {
            headers.add(name: "Retry-After", value: String(retryAfter))
        }
        return Refusal(status: HTTPResponseStatus(statusCode: policy.status), headers: headers, body: body, reason: reason,
                       policyRule: policy.rule)
    }
}
