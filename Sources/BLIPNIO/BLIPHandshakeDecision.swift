import NIOHTTP1

/// What a BLIP WebSocket server answers to an upgrade request (wire-format reference §1.2).
public enum BLIPHandshakeDecision: Sendable {
    /// Upgrade (101) with this `Sec-WebSocket-Protocol` and any extra headers (e.g. `Set-Cookie`).
    case accept(subprotocol: String?, headers: HTTPHeaders = [:])
    /// Answer with an HTTP error instead (e.g. 401 with `WWW-Authenticate`, or Sync Gateway's
    /// 500 "I only speak … protocols").
    case refuse(status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: String = "")
    /// Never answer: for testing a client's handshake timeout.
    case hang

    /// Sync Gateway's rule: the first protocol in the client's list that the server supports wins;
    /// no overlap is refused with 500 "I only speak <list> protocols".
    public static func syncGatewayChoice(offered: [String], supported: [String]) -> BLIPHandshakeDecision {
        if let match = offered.first(where: { supported.contains($0) }) {
            return .accept(subprotocol: match)
        }
        return .refuse(status: .internalServerError,
                       body: "I only speak \(supported.joined(separator: ",")) protocols")
    }

    /// The comma-separated `Sec-WebSocket-Protocol` values of a request, trimmed, in order.
    public static func offeredProtocols(_ headers: HTTPHeaders) -> [String] {
        headers[canonicalForm: "Sec-WebSocket-Protocol"].map { String($0) }.filter { !$0.isEmpty }
    }
}
