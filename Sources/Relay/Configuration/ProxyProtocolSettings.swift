import NIOCore
import ProxyProtocol

/// How the relay reads the PROXY protocol header a load balancer (HAProxy's `send-proxy` or
/// `send-proxy-v2`) puts before each client's bytes (``RelayConfiguration/proxyProtocol``).
/// Both versions are accepted on every connection (`doc/proxy-protocol.txt` §2 recommends
/// version 2 receivers take version 1 too); a connection without a header is refused, never
/// guessed at (§2: the protocol forbids sharing a port between proxied and direct clients).
public struct ProxyProtocolSettings: Sendable, Equatable {
    /// A connection must complete its header within this, counted from its accept, or it is
    /// closed (a silent connection holds no slot). The protocol asks for at least 3 seconds, to
    /// cover a TCP retransmit (§2). Within the request-head timeout
    /// (``RelayConfiguration/clientHandshakeTimeout``), which counts from the accept too.
    public var headerTimeout = TimeAmount.seconds(5)
    /// How much of a header is held: a version 1 line's 107 bytes, a version 2 header's limit.
    public var limits = ProxyProtocolLimits()

    public init() {}
}
