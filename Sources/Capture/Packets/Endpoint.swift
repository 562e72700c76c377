/// One end of a TCP connection: an IP address and a port.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public var ip: IPAddress
    public var port: UInt16

    public init(ip: IPAddress, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// The address in text form: `127.0.0.1`, `::1`.
    public var address: String { ip.description }

    /// `127.0.0.1:4984`, or `[::1]:4984` for IPv6.
    public var description: String {
        switch ip {
        case .v4: "\(ip):\(port)"
        case .v6: "[\(ip)]:\(port)"
        }
    }
}
