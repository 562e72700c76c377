/// The status line and headers of an HTTP/1.x response, as captured.
public struct HTTPResponseHead: Sendable, Hashable {
    /// For example `HTTP/1.1`.
    public var version: String
    public var status: Int
    /// The reason phrase; may be empty.
    public var reason: String
    public var headers: HTTPHeaderFields

    public init(version: String, status: Int, reason: String, headers: HTTPHeaderFields) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// Whether the server switched protocols (status 101). After it, both directions carry
    /// WebSocket frames.
    public var isSwitchingProtocols: Bool { status == 101 }

    /// The declared body length, if a valid `Content-Length` is present.
    public var contentLength: Int? {
        headers["Content-Length"].flatMap { Int($0.trimmingSpaces) }.flatMap { $0 >= 0 ? $0 : nil }
    }
}
