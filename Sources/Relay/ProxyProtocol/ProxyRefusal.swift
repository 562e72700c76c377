import NIOCore
import ProxyProtocol

/// A client connection the relay closed before reading its request, because it did not begin
/// with an acceptable PROXY protocol header (``RelayConfiguration/proxyProtocol``).
public struct ProxyRefusal: Sendable {
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The first bytes are no acceptable header (missing, malformed, unsupported, too long).
        case header(ProxyProtocolError)
        /// No complete header within ``ProxyProtocolSettings/headerTimeout``.
        case timeout(TimeAmount)
        /// The connection closed after `bytes` bytes of a header, before its end.
        case closed(bytes: Int)

        /// The `reason` label of `blipscope_proxy_protocol_refusals_total`: one of ``labels``.
        public var label: String {
            switch self {
            case .header(let error): error.kind.rawValue
            case .timeout: "timeout"
            case .closed: "incomplete"
            }
        }

        /// Every value ``label`` takes.
        public static let labels = ProxyProtocolError.Kind.allCases.map(\.rawValue) + ["timeout", "incomplete"]

        public var description: String {
            switch self {
            case .header(let error): error.description
            case .timeout(let limit): "no complete PROXY protocol header within \(limit.nanoseconds / 1_000_000) ms"
            case .closed(let bytes): "closed after \(bytes) bytes of a PROXY protocol header, before its end"
            }
        }
    }

    /// Who connected (the TCP peer): a load balancer, or a client that came around it.
    public var peer: SocketAddress?
    public var reason: Reason

    /// The peer as `IP:PORT`.
    public var peerDescription: String { ClientAddress.text(peer) }
}
