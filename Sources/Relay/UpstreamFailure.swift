/// Why dialling the upstream for a client's handshake failed: the `reason` label of
/// `blipscope_upstream_connect_failures_total`. It travels typed from where the dial failed to the
/// metric; the client's HTTP status is no guide (an upstream's own 502 is a refusal, not an
/// unreachable upstream).
public enum UpstreamFailure: String, Sendable, CaseIterable {
    /// No connection could be made (refused, reset, no route, TLS failure): the client gets 502.
    case unreachable
    /// The upstream did not finish its WebSocket handshake in time: 504.
    case timeout
    /// The upstream answered the upgrade with an HTTP status other than 101, passed on to the client.
    case refused
    /// The upstream answered 101 in a way the relay cannot accept (no or another sub-protocol, a
    /// bad accept key): 502.
    case handshake
}
