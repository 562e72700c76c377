import NIOCore
import ProxyProtocol

/// Where a client is: the connection's peer, or, behind a load balancer that speaks the PROXY
/// protocol (``RelayConfiguration/proxyProtocol``), the client the header named. One value, set
/// before the request head is read and fixed from then on; the relay takes every client address
/// from it: connection rules (CIDR), log lines, `/sessions`, the web view, capture files, the
/// pcap's client leg and the `X-Forwarded-For` it sends upstream.
public struct ClientAddress: Sendable, Hashable, CustomStringConvertible {
    /// The client's address and port (nil only when the socket could not say).
    public var source: SocketAddress?
    /// Where the client connected to, as the header said (the load balancer's front address);
    /// nil for a direct connection.
    public var destination: SocketAddress?
    /// The load balancer the connection came through (the TCP peer) when a header named the
    /// client; nil for a direct connection, and for a LOCAL or UNKNOWN header (a health check),
    /// whose client is the peer itself.
    public var proxy: SocketAddress?

    /// A direct connection from `peer`.
    public init(peer: SocketAddress?) {
        source = peer
    }

    /// A connection from `peer` that began with `header`: a PROXY header's source and
    /// destination; the peer's own address for LOCAL and UNKNOWN (`doc/proxy-protocol.txt` §2).
    init(header: ProxyHeader, peer: SocketAddress?) {
        guard case let .proxied(source, destination) = header else {
            self.init(peer: peer)
            return
        }
        self.init(peer: Self.socketAddress(source))
        self.destination = Self.socketAddress(destination)
        proxy = peer
    }

    /// The client's IP in text form (`192.0.2.1`, `2001:db8::1`), or `?` when unknown.
    public var ip: String { source?.ipAddress ?? "?" }

    public var port: Int? { source?.port }

    /// `192.0.2.1:56324`, `[2001:db8::1]:56324`, or `?`.
    public var description: String { Self.text(source) }

    /// The load balancer's `IP:PORT`, when a header named the client.
    public var proxyDescription: String? { proxy.map { Self.text($0) } }

    static func text(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "?" }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return address.port.map { "\(host):\($0)" } ?? host
    }

    private static func socketAddress(_ endpoint: ProxyEndpoint) -> SocketAddress? {
        try? SocketAddress(packedIPAddress: ByteBuffer(bytes: endpoint.address.bytes), port: Int(endpoint.port))
    }
}
