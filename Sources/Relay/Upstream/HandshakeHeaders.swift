import BLIPNIO
import Foundation
import NIOHTTP1

/// Which handshake headers cross the relay, in each direction (wire-format reference §1.1–§1.2).
enum HandshakeHeaders {
    /// Hop-by-hop and per-connection WebSocket headers: never passed on in a response.
    /// `Sec-WebSocket-Extensions` is among them so `permessage-deflate` is never negotiated on
    /// either side (§1.1).
    static let hopByHop: Set<String> = [
        "connection", "upgrade", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "content-length", "host",
        "sec-websocket-key", "sec-websocket-version", "sec-websocket-accept", "sec-websocket-extensions",
    ]

    /// What of the client's request the relay owns and so drops: hop-by-hop headers other than
    /// the upgrade's own, and `permessage-deflate`'s offer (§1.1).
    static let droppedFromRequest: Set<String> = [
        "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "content-length", "sec-websocket-extensions",
    ]

    /// The upstream request: the client's request as the client wrote it (header names, order,
    /// token spelling, `Sec-WebSocket-Key` and `-Version` included), changing only what the relay
    /// owns (§1.2). `Host` names the upstream, in the client's place for it; `Connection` keeps
    /// only its `Upgrade` token as spelled (other tokens name hop-by-hop headers, which are
    /// dropped with them, RFC 7230 §6.1); `X-Forwarded-For` gains the client's address and
    /// `X-Forwarded-Proto` says how the client came. Nil when the request has no
    /// `Sec-WebSocket-Key`.
    static func upstreamRequest(from client: HTTPRequestHead, uri: String, upstreamHost: String,
                                clientIP: String?, clientTLS: Bool) -> WebSocketUpgradeRequest? {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        let connectionTokens = client.headers[canonicalForm: "connection"].map { $0.lowercased() }
        let dropped = droppedFromRequest.union(connectionTokens.filter { $0 != "upgrade" })
        var forwardedFor: String?
        var wroteHost = false
        for (name, value) in client.headers {
            switch name.lowercased() {
            case let lower where dropped.contains(lower):
                continue
            case "host":
                if !wroteHost { head.headers.add(name: name, value: upstreamHost) }
                wroteHost = true
            case "connection":
                let upgrade = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { $0.lowercased() == "upgrade" }
                if !upgrade.isEmpty { head.headers.add(name: name, value: upgrade.joined(separator: ", ")) }
            case "x-forwarded-for":
                forwardedFor = forwardedFor.map { "\($0), \(value)" } ?? value
            case "x-forwarded-proto":
                continue
            default:
                head.headers.add(name: name, value: value)
            }
        }
        if !wroteHost { head.headers = HTTPHeaders([("Host", upstreamHost)] + Array(head.headers)) }
        if !head.headers.contains(name: "Connection") { head.headers.add(name: "Connection", value: "Upgrade") }
        if let clientIP { forwardedFor = forwardedFor.map { "\($0), \(clientIP)" } ?? clientIP }
        if let forwardedFor { head.headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        head.headers.add(name: "X-Forwarded-Proto", value: clientTLS ? "https" : "http")
        return WebSocketUpgradeRequest(planned: head)
    }

    /// What of the upstream's 101 goes back to the client: the chosen sub-protocol, cookies and
    /// the correlation id (NIO adds Upgrade, Connection and Accept itself).
    static func upgradeResponse(from upstream: HTTPResponseHead) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in upstream.headers {
            switch name.lowercased() {
            case "sec-websocket-protocol", "set-cookie", "x-correlation-id": headers.add(name: name, value: value)
            default: break
            }
        }
        return headers
    }

    /// An upstream refusal passed on: every header but the hop-by-hop ones (the relay sets its own
    /// length and closes), e.g. `WWW-Authenticate`, `Content-Type`, `X-Correlation-ID`.
    static func refusalResponse(from upstream: HTTPResponseHead) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in upstream.headers where !hopByHop.contains(name.lowercased()) {
            headers.add(name: name, value: value)
        }
        return headers
    }
}
