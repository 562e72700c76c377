import BLIPNIO
import Foundation
import NIOHTTP1

/// The gateway's answer to a WebSocket upgrade request, decided as Sync Gateway decides it
/// (replication-protocol §2; wire-format reference §1.2): the path must be `/{db}/_blipsync` of a
/// served database (404), the Basic credentials must match when users are configured (401 with
/// a `WWW-Authenticate` challenge: LiteCore only sends credentials after one), and one of the
/// client's sub-protocols must be spoken, the client's order winning (500 "I only speak …").
///
/// An accepted upgrade gets an `X-Correlation-ID`, as from Sync Gateway: its context ID for the
/// replication (eight or fewer lower-case hex digits), which prefixes its log lines (`c:[ID]`).
struct GatewayHandshake: Equatable {
    var database: String
    var user: String?
    var correlationID = GatewayHandshake.newCorrelationID()

    /// Sync Gateway's shape: the hex of a random 31-bit number.
    static func newCorrelationID() -> String { String(UInt32.random(in: 0..<(1 << 31)), radix: 16) }

    enum Outcome {
        case accept(GatewayHandshake, BLIPHandshakeDecision)
        case refuse(BLIPHandshakeDecision)
    }

    static func decide(_ head: HTTPRequestHead, configuration: GatewayConfiguration) -> Outcome {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        // Sync Gateway's root answers a welcome: what a load balancer's or the relay's health check asks.
        if path == "/", head.method == .GET, !head.headers.contains(name: "Upgrade") {
            return .refuse(.refuse(status: .ok, headers: ["Content-Type": "application/json"], body: welcome))
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[1] == "_blipsync" else {
            return .refuse(jsonError(.notFound, "not_found", "unknown URL \(path)"))
        }
        let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        guard configuration.database(named: name) != nil else {
            return .refuse(jsonError(.notFound, "not_found", "no such database \"\(name)\""))
        }
        var user: String?
        if !configuration.users.isEmpty {
            guard let credentials = basicCredentials(head.headers),
                  configuration.users[credentials.user] == credentials.password else {
                var refusal = jsonError(.unauthorized, "Unauthorized", "Login required")
                if case .refuse(let status, var headers, let body) = refusal {
                    headers.add(name: "WWW-Authenticate", value: "Basic realm=\"\(configuration.realm)\"")
                    refusal = .refuse(status: status, headers: headers, body: body)
                }
                return .refuse(refusal)
            }
            user = credentials.user
        }
        let choice = BLIPHandshakeDecision.syncGatewayChoice(
            offered: BLIPHandshakeDecision.offeredProtocols(head.headers), supported: configuration.subprotocols)
        guard case .accept(let subprotocol, var headers) = choice else { return .refuse(choice) }
        let handshake = GatewayHandshake(database: name, user: user)
        headers.add(name: "X-Correlation-ID", value: handshake.correlationID)
        return .accept(handshake, .accept(subprotocol: subprotocol, headers: headers))
    }

    /// The body of `GET /`, shaped as Sync Gateway's (`couchdb`, `vendor`).
    static let welcome = #"{"couchdb":"Welcome","vendor":{"name":"BlipScope embedded gateway"}}"#

    /// N of `BLIP_3+CBMobile_N` (3 when absent or unreadable).
    static func protocolVersion(of subprotocol: String?) -> Int {
        guard let subprotocol, let range = subprotocol.range(of: "+CBMobile_") else { return 3 }
        return Int(subprotocol[range.upperBound...]) ?? 3
    }

    /// `Authorization: Basic base64(user:password)`.
    static func basicCredentials(_ headers: HTTPHeaders) -> (user: String, password: String)? {
        guard let value = headers.first(name: "Authorization"), value.lowercased().hasPrefix("basic "),
              let data = Data(base64Encoded: String(value.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Sync Gateway's JSON error body: `{"error":"…","reason":"…"}`.
    private static func jsonError(_ status: HTTPResponseStatus, _ error: String, _ reason: String) -> BLIPHandshakeDecision {
        let body = "{\"error\":\"\(error)\",\"reason\":\"\(reason.replacingOccurrences(of: "\"", with: "\\\""))\"}"
        return .refuse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }
}
