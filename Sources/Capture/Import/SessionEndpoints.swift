import Foundation

/// The TCP endpoints and HTTP heads of one leg of a relayed session, rebuilt from its handshake
/// record. Addresses the record does not hold are made up, stable and recognisable:
/// 10.66.0.1 the client, 10.66.0.2 the relay, 10.66.0.3 the upstream.
enum SessionEndpoints {
    static let clientIP = IPAddress.v4(0x0A42_0001)
    static let relayIP = IPAddress.v4(0x0A42_0002)
    static let upstreamIP = IPAddress.v4(0x0A42_0003)

    /// A connection with endpoints, request and response filled in, and no events yet.
    static func connection(index: Int, leg: CaptureLeg, handshake: CaptureRecord.Handshake?) -> CapturedConnection {
        let upstream = upstreamEndpoint(handshake?.upstreamURL)
        let client: Endpoint, server: Endpoint
        if leg == .upstream {
            client = Endpoint(ip: relayIP, port: 40_000 + UInt16(truncatingIfNeeded: index))
            server = upstream
        } else {
            client = parseEndpoint(handshake?.clientAddress) ?? Endpoint(ip: clientIP, port: 50_000)
            let host = handshake?.requestHeaders["Host"]
            server = parseEndpoint(host) ?? Endpoint(ip: relayIP, port: port(inHost: host) ?? 4984)
        }
        var connection = CapturedConnection(index: index, client: client, server: server, kind: .other, roleEvidence: .syn)
        guard let handshake else { return connection }
        connection.request = request(handshake, leg: leg)
        connection.handshakeTime = handshake.time
        connection.kind = .http
        if handshake.responseStatus >= 100 {
            connection.response = HTTPResponseHead(
                version: "HTTP/1.1", status: handshake.responseStatus, reason: handshake.responseReason,
                headers: handshake.responseHeaders
            )
            if handshake.responseStatus == 101 { connection.kind = .webSocket }
        }
        return connection
    }

    /// The client's request; on the upstream leg, with the upstream URL's target and host.
    private static func request(_ handshake: CaptureRecord.Handshake, leg: CaptureLeg) -> HTTPRequestHead {
        let parts = handshake.requestLine.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var head = HTTPRequestHead(
            method: parts.first ?? "GET", target: parts.count > 1 ? parts[1] : "/",
            version: parts.count > 2 ? parts[2] : "HTTP/1.1", headers: handshake.requestHeaders
        )
        guard leg == .upstream, let url = URLComponents(string: handshake.upstreamURL) else { return head }
        let query = url.percentEncodedQuery.map { "?" + $0 } ?? ""
        if !url.percentEncodedPath.isEmpty { head.target = url.percentEncodedPath + query }
        let host = url.host.map { name in url.port.map { "\(name):\($0)" } ?? name }
        if let host {
            let fields = head.headers.map { field in
                field.name.lowercased() == "host" ? HTTPHeaderFields.Field(name: field.name, value: host) : field
            }
            head.headers = HTTPHeaderFields(fields)
        }
        return head
    }

    private static func upstreamEndpoint(_ url: String?) -> Endpoint {
        guard let url, let components = URLComponents(string: url) else { return Endpoint(ip: upstreamIP, port: 4984) }
        let secure = components.scheme == "wss" || components.scheme == "https"
        let port = UInt16(exactly: components.port ?? (secure ? 443 : 80)) ?? 4984
        let ip = components.host.flatMap(parseIPv4) ?? upstreamIP
        return Endpoint(ip: ip, port: port)
    }

    /// `a.b.c.d:port`; nil for anything else (names, IPv6).
    static func parseEndpoint(_ text: String?) -> Endpoint? {
        guard let text, let colon = text.lastIndex(of: ":"),
              let ip = parseIPv4(String(text[..<colon])),
              let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        return Endpoint(ip: ip, port: port)
    }

    private static func port(inHost host: String?) -> UInt16? {
        guard let host, let colon = host.lastIndex(of: ":") else { return nil }
        return UInt16(host[host.index(after: colon)...])
    }

    static func parseIPv4(_ text: String) -> IPAddress? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return .v4(value)
    }
}
