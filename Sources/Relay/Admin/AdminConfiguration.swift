/// Where the admin listener (`/metrics`, `/healthz`, `/readyz`, `/sessions`) listens and who may
/// use it. Bound to loopback by default; any other address requires a bearer token.
public struct AdminConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port (tests, benchmarks).
    public var port = 9094
    /// Required as `Authorization: Bearer TOKEN` on every request when set; mandatory off loopback.
    public var bearerToken: String?
    /// `/readyz` gives the upstream this long to accept a TCP connection.
    public var upstreamProbeTimeout: Int64 = 1
    /// Largest request head accepted; bodies are ignored.
    public var maxRequestHeadBytes = 8 * 1024

    public init(host: String = "127.0.0.1", port: Int = 9094, bearerToken: String? = nil) {
        self.host = host
        self.port = port
        self.bearerToken = bearerToken
    }

    /// True for 127.0.0.0/8, ::1 and `localhost`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Rejects a non-loopback address without a token.
    public func validate() throws(RelayError) {
        if !isLoopback && (bearerToken ?? "").isEmpty {
            throw RelayError(.adminTokenRequired(host: host))
        }
    }
}
