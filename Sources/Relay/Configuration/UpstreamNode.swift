/// One Sync Gateway node: where its public port listens and whether it speaks TLS. Several
/// upstream URLs (different path prefixes) may reach one node; its live sessions, health and
/// metrics are the node's, not the URL's.
public struct UpstreamNode: Sendable, Hashable, CustomStringConvertible {
    public var secure: Bool
    public var host: String
    public var port: Int

    public init(secure: Bool, host: String, port: Int) {
        self.secure = secure
        self.host = host
        self.port = port
    }

    /// `host:port` (IPv6 in brackets): the `node` label of the per-node metrics, and how logs,
    /// `/sessions` and the web view name the node. An ``UpstreamURL`` holds no credentials, so
    /// neither does this.
    public var label: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    public var description: String { label }
}
