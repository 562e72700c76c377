import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// TCP keepalive on both legs of a session, so a peer that vanishes without a FIN or RST (a
/// phone leaving coverage, a NAT dropping its mapping) is noticed in about
/// `idle + interval × probes` instead of at the idle timeout.
public struct TCPKeepAlive: Sendable, Equatable {
    /// Silence before the first probe (`TCP_KEEPIDLE`), in seconds.
    public var idleSeconds: Int32
    /// Between unanswered probes (`TCP_KEEPINTVL`), in seconds.
    public var intervalSeconds: Int32
    /// Unanswered probes before the kernel drops the connection (`TCP_KEEPCNT`).
    public var probes: Int32

    public init(idleSeconds: Int32 = 60, intervalSeconds: Int32 = 10, probes: Int32 = 6) {
        self.idleSeconds = idleSeconds
        self.intervalSeconds = intervalSeconds
        self.probes = probes
    }

    public static let `default` = TCPKeepAlive()

    /// The socket options that turn it on, as (option, value) pairs.
    var options: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] {
        [(.socketOption(.so_keepalive), 1),
         (.tcpOption(.init(rawValue: TCP_KEEPIDLE)), SocketOptionValue(idleSeconds)),
         (.tcpOption(.init(rawValue: TCP_KEEPINTVL)), SocketOptionValue(intervalSeconds)),
         (.tcpOption(.init(rawValue: TCP_KEEPCNT)), SocketOptionValue(probes))]
    }
}

extension ServerBootstrap {
    /// Accepted connections keep alive as `keepAlive` says; nil leaves them as the kernel has them.
    func childKeepAlive(_ keepAlive: TCPKeepAlive?) -> ServerBootstrap {
        guard let keepAlive else { return self }
        return keepAlive.options.reduce(self) { $0.childChannelOption($1.0, value: $1.1) }
    }
}

extension ClientBootstrap {
    /// The dialed connection keeps alive as `keepAlive` says; nil leaves it as the kernel has it.
    func keepAlive(_ keepAlive: TCPKeepAlive?) -> ClientBootstrap {
        guard let keepAlive else { return self }
        return keepAlive.options.reduce(self) { $0.channelOption($1.0, value: $1.1) }
    }
}
