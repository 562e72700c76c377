import NIOHTTP1

/// Which handshake headers cross the relay, in each direction (wire-format reference §1.1–§1.2).
enum HandshakeHeaders {
    /// Hop-by-hop and per-connection WebSocket headers: never forwarded. `Sec-WebSocket-Extensions`
    /// is among them so `permessage-deflate` is never negotiated on either side (§1.1).
    static let hopByHop: Set<String> = [
        "connection", "upgrade", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "content-length", "host",
        "sec-websocket-key", "sec-websocket-version", "sec-websocket-accept", "sec-websocket-extensions",
    ]

    /// The upstream request: the client's end-to-end headers unchanged and in order
    /// (`Sec-WebSocket-Protocol`, `Authorization`, `Cookie` …), a `Host` for the upstream, and
    /// `X-Forwarded-For` / `X-Forwarded-Proto`.
    static func upstreamRequest(from client: HTTPRequestHead, uri: String, upstreamHost: String,
                                clientIP: String?, clientTLS: Bool) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        head.headers.add(name: "Host", value: upstreamHost)
        var forwardedFor: String?
        for (name, value) in client.headers {
            let lower = name.lowercased()
            if hopByHop.contains(lower) { continue }
            if lower == "x-forwarded-for" { forwardedFor = forwardedFor.map { "\($0), \(value)" } ?? value; continue }
            if lower == "x-forwarded-proto" { continue }
            head.headers.add(name: name, value: value)
        }
        if let clientIP { forwardedFor = forwardedFor.map { "\($0), \(clientIP)" } ?? clientIP }
        if let forwardedFor { head.headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        head.headers.add(name: "X-Forwarded-Proto", value: clientTLS ? "https" : "http")
        return head
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
