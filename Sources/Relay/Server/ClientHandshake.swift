import Foundation
import NIOHTTP1

/// What the relay reads from a client's upgrade request (wire-format reference §1.2).
struct ClientHandshake {
    var database: String
    var offeredProtocols: [String]
    var user: String?

    /// Parses `/{db}/_blipsync[?query]`; throws ``RelayError``: 404 for any other path, 400 for
    /// a request that is no WebSocket upgrade, 426 for a WebSocket version other than 13 (RFC
    /// 6455 §4.4), 400 when no `BLIP_3+…` sub-protocol is offered. Checked in that order, so the
    /// answer names the first thing wrong.
    init(_ head: HTTPRequestHead) throws(RelayError) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty, parts[2] == "_blipsync" else {
            throw RelayError(.notFound(path: String(path)))
        }
        let upgrade = head.headers[canonicalForm: "Upgrade"].map { $0.lowercased() }
        guard upgrade.contains("websocket"),
              head.headers[canonicalForm: "Connection"].contains(where: { $0.lowercased() == "upgrade" }),
              head.headers.first(name: "Sec-WebSocket-Key") != nil else {
            throw RelayError(.notAnUpgrade)
        }
        let version = head.headers.first(name: "Sec-WebSocket-Version") ?? ""
        guard version == "13" else { throw RelayError(.unsupportedWebSocketVersion(version.isEmpty ? "(none)" : version)) }
        database = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        offeredProtocols = head.headers[canonicalForm: "Sec-WebSocket-Protocol"].map(String.init)
        guard offeredProtocols.contains(where: { $0.hasPrefix("BLIP_3+") }) else {
            throw RelayError(.noBLIPProtocol(offered: offeredProtocols))
        }
        user = Self.user(from: head.headers)
    }

    /// The Basic-auth user name (`basic` when the credentials have no `user:` part), or
    /// `cookie:<name>` for a session cookie (`cookie` when no cookie has a name); never the secret.
    static func user(from headers: HTTPHeaders) -> String? {
        if let authorization = headers.first(name: "Authorization"), authorization.lowercased().hasPrefix("basic "),
           let data = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
           let decoded = String(data: data, encoding: .utf8) {
            // Without the user:password colon the whole credential would be shown: say only the scheme.
            guard let colon = decoded.firstIndex(of: ":") else { return "basic" }
            return String(decoded[..<colon])
        }
        if let cookie = headers.first(name: "Cookie") {
            // A name only where there is one: a nameless cookie is all value (RFC 6265 §5.2).
            let names = cookie.split(separator: ";").compactMap { part -> String? in
                guard let equals = part.firstIndex(of: "=") else { return nil }
                return part[..<equals].trimmingCharacters(in: .whitespaces)
            }
            if let session = names.first(where: { $0.lowercased().contains("session") }) ?? names.first {
                return "cookie:" + session
            }
            return "cookie"
        }
        if headers.first(name: "Authorization") != nil { return "bearer" }
        return nil
    }
}
