import Foundation

/// A `ws://host:port[/prefix]` or `wss://…` upstream. The client's path (`/{db}/_blipsync`) and
/// query are appended to the prefix.
public struct UpstreamURL: Sendable, Equatable, CustomStringConvertible {
    public var secure: Bool
    public var host: String
    public var port: Int
    /// Path prefix without a trailing slash ("" for none).
    public var pathPrefix: String

    public init(secure: Bool, host: String, port: Int, pathPrefix: String = "") {
        self.secure = secure
        self.host = host
        self.port = port
        self.pathPrefix = pathPrefix
    }

    /// Parses `ws://host[:port][/prefix]` or `wss://…`; default ports 80 and 443. IPv6 hosts go
    /// in brackets. Returns nil for anything else.
    public init?(_ string: String) {
        let secure: Bool
        var rest: Substring
        if string.hasPrefix("ws://") { secure = false; rest = string.dropFirst(5) }
        else if string.hasPrefix("wss://") { secure = true; rest = string.dropFirst(6) }
        else { return nil }
        var prefix = ""
        if let slash = rest.firstIndex(of: "/") {
            prefix = String(rest[slash...])
            rest = rest[..<slash]
        }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        var host = String(rest)
        var port = secure ? 443 : 80
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { guard let p = Int(after.dropFirst()) else { return nil }; port = p }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            guard let p = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(secure: secure, host: host, port: port, pathPrefix: prefix)
    }

    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(secure ? "wss" : "ws")://\(shownHost):\(port)\(pathPrefix)"
    }
}

extension UpstreamURL {
    /// The Sync Gateway node this URL reaches: its scheme, host and port, without the prefix.
    public var node: UpstreamNode { UpstreamNode(secure: secure, host: host, port: port) }
}
