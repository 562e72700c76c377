import BLIPCore
import NIOCore
import ReplicationNames

extension GatewayError {
    /// The ERR reply Sync Gateway would send for this error: `Error-Domain: HTTP`, the status as
    /// `Error-Code`, the detail as body (wire-format reference §6).
    func errorReply(to request: BLIPMessage) -> BLIPMessage {
        .error(to: request.number, domain: "HTTP", code: status, message: replyMessage, urgent: request.isUrgent)
    }

    /// BLIP's own 404 for a profile nobody handles, worded as Sync Gateway words it (§6).
    static func noHandler(for request: BLIPMessage) -> BLIPMessage {
        .error(to: request.number, domain: "BLIP", code: 404, message: "No handler for BLIP request", urgent: request.isUrgent)
    }

    /// The error an ERR reply stands for; nil for a success reply.
    static func from(reply: BLIPMessage) -> GatewayError? {
        guard reply.type == .error else { return nil }
        let domain = reply.properties[.errorDomain] ?? "BLIP"
        let code = reply.properties[.errorCode].flatMap { Int($0) } ?? 0
        return .remote(domain: domain, code: code, message: String(buffer: reply.body))
    }
}
