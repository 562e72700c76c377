import BLIPCore

/// One of a session's two connections: the client's hop (client ⇄ relay) or the upstream's
/// (relay ⇄ upstream).
enum SessionSide: Int, Sendable, CaseIterable {
    case client = 0, upstream = 1

    var other: SessionSide { self == .client ? .upstream : .client }
    /// The direction of the frames this side receives.
    var inbound: BLIPDirection { self == .client ? .clientToServer : .serverToClient }
    /// The side frames travelling `direction` are written to.
    init(writing direction: BLIPDirection) { self = direction == .clientToServer ? .upstream : .client }
    /// Frames the relay writes toward the upstream are masked: it is the upstream's client (RFC 6455 §5.3).
    var masksWrites: Bool { self == .upstream }
}
