/// The start line and headers of an HTTP/1.x request, as captured.
public struct HTTPRequestHead: Sendable, Hashable {
    public var method: String
    /// The request target as sent: usually a path with an optional query, e.g. `/db/_blipsync?client=sgr2`.
    public var target: String
    /// For example `HTTP/1.1`.
    public var version: String
    public var headers: HTTPHeaderFields

    public init(method: String, target: String, version: String, headers: HTTPHeaderFields) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target without its query.
    public var path: String { String(target.prefix { $0 != "?" }) }

    /// The query after `?`, without it; `nil` if there is none.
    public var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: mark)...])
    }

    /// Whether this asks for a WebSocket upgrade (`Upgrade: websocket`, RFC 6455 §4.1).
    public var isWebSocketUpgrade: Bool {
        headers.listValues(for: "Upgrade").contains { $0.lowercased() == "websocket" }
    }
}
