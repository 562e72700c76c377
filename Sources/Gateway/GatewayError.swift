/// Everything that can go wrong in the gateway or the replicator, with a sentence a user can read.
/// The module's one error type. ``status`` is the HTTP-like code that an ERR reply carries with
/// `Error-Domain: HTTP`, as Sync Gateway does for every handler failure (wire-format reference §6);
/// ``errorReply(to:)`` is the one place where errors become BLIP error replies.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case badRequest(String)
        case notFound(String)
        case notModified(String)
        case conflict(String)
        case forbidden(String)
        case unsupported(String)
        case tooLarge(what: String, size: Int, limit: Int)
        case remote(domain: String, code: Int, message: String)
        case refused(status: Int, body: String)
        case connection(String)
        case peerClosed(code: UInt16, reason: String)
        case invalidConfiguration(String)
        case seedData(String)
    }

    private let reason: Reason

    private init(_ reason: Reason) { self.reason = reason }

    static func badRequest(_ detail: String) -> Self { Self(.badRequest(detail)) }
    static func notFound(_ detail: String) -> Self { Self(.notFound(detail)) }
    static func notModified(_ detail: String) -> Self { Self(.notModified(detail)) }
    static func conflict(_ detail: String) -> Self { Self(.conflict(detail)) }
    static func forbidden(_ detail: String) -> Self { Self(.forbidden(detail)) }
    static func unsupported(_ detail: String) -> Self { Self(.unsupported(detail)) }
    static func tooLarge(_ what: String, size: Int, limit: Int) -> Self { Self(.tooLarge(what: what, size: size, limit: limit)) }
    static func remote(domain: String, code: Int, message: String) -> Self {
        Self(.remote(domain: domain, code: code, message: message))
    }
    static func refused(status: Int, body: String) -> Self { Self(.refused(status: status, body: body)) }
    static func connection(_ detail: String) -> Self { Self(.connection(detail)) }
    static func peerClosed(code: UInt16, reason: String) -> Self { Self(.peerClosed(code: code, reason: reason)) }
    static func invalidConfiguration(_ detail: String) -> Self { Self(.invalidConfiguration(detail)) }
    static func seedData(_ detail: String) -> Self { Self(.seedData(detail)) }

    /// The HTTP-like status of this error (`Error-Code` of the ERR reply, or the handshake status).
    public var status: Int {
        switch reason {
        case .badRequest: return 400
        case .notFound: return 404
        case .notModified: return 304
        case .conflict: return 409
        case .forbidden: return 403
        case .unsupported: return 501
        case .tooLarge: return 413
        case .remote(_, let code, _): return code
        case .refused(let status, _): return status
        case .connection, .peerClosed: return 503
        case .invalidConfiguration, .seedData: return 500
        }
    }

    /// True when this is a conflict: a 409 from us or from the peer.
    public var isConflict: Bool { status == 409 }

    /// The WebSocket close code that ended a replication before it finished (1006 when the TCP
    /// connection dropped without a CLOSE); nil for any other error.
    public var closeCode: UInt16? {
        if case .peerClosed(let code, _) = reason { return code }
        return nil
    }

    /// How Couchbase Lite would treat this end of a replication (wire-format reference §7): by the
    /// close code when the peer closed, by the HTTP status of a refused handshake or error reply
    /// otherwise.
    public var closeReaction: PeerCloseReaction {
        if let closeCode { return PeerCloseReaction(closeCode: closeCode) }
        return PeerCloseReaction(httpStatus: status)
    }

    public var description: String {
        switch reason {
        case .badRequest(let detail): return "bad request: \(detail)"
        case .notFound(let detail): return "not found: \(detail)"
        case .notModified(let detail): return "not modified: \(detail)"
        case .conflict(let detail): return "conflict: \(detail)"
        case .forbidden(let detail): return "forbidden: \(detail)"
        case .unsupported(let detail): return "not supported: \(detail)"
        case .tooLarge(let what, let size, let limit): return "\(what) of \(size) bytes exceeds the \(limit)-byte limit"
        case .remote(let domain, let code, let message):
            return "the peer answered \(domain) \(code)" + (message.isEmpty ? "" : ": \(message)")
        case .refused(let status, let body):
            return "the server refused the WebSocket upgrade with HTTP \(status)" + (body.isEmpty ? "" : ": \(body)")
        case .connection(let detail): return "connection failed: \(detail)"
        case .peerClosed(let code, let reason):
            return "the peer closed the connection with \(code) before replication finished" + (reason.isEmpty ? "" : ": \(reason)")
        case .invalidConfiguration(let detail): return "invalid configuration: \(detail)"
        case .seedData(let detail): return "cannot load seed data: \(detail)"
        }
    }

    /// The message an ERR reply carries: the detail without the status word.
    var replyMessage: String {
        switch reason {
        case .badRequest(let detail), .notFound(let detail), .notModified(let detail), .conflict(let detail),
             .forbidden(let detail), .unsupported(let detail), .connection(let detail),
             .invalidConfiguration(let detail), .seedData(let detail):
            return detail
        case .remote(_, _, let message): return message
        default: return description
        }
    }
}
