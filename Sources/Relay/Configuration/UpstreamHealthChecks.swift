import NIOCore

/// How the relay checks its Sync Gateway nodes in the background: `GET /` on each node's public
/// port (Sync Gateway answers it with its welcome JSON), over TLS with the relay's upstream trust
/// for a `wss://` node. HAProxy's `check inter … fall … rise …` idea: a node is down after
/// ``fall`` failed checks in a row and up again after ``rise`` passed ones; a down node gets no
/// new session while another node of its route is up.
public struct UpstreamHealthChecks: Sendable, Equatable {
    /// The relay command's check interval (`--upstream-check-interval`): 5 s, a few seconds as in
    /// HAProxy's `inter` (its default is 2 s) and Envoy's health-check examples, so a node that
    /// dies stops getting sessions within ``fall`` × 5 s without loading the nodes.
    public static let defaultInterval = TimeAmount.seconds(5)

    /// Time between two checks of a node, from the end of one to the start of the next; nil checks
    /// nothing (every node counts as up, a failed dial still passes to the next node). Nil by
    /// default for a ``RelayServer`` made in code; the `relay` command sets ``defaultInterval``.
    public var interval: TimeAmount? = nil
    /// A check that has no HTTP answer head within this fails (`--upstream-check-timeout`,
    /// default 2 s: a node on the same network answers `GET /` in milliseconds; HAProxy's
    /// `timeout check` is commonly set to a couple of seconds).
    public var timeout = TimeAmount.seconds(2)
    /// Consecutive failed checks that take an up node down (`--upstream-fall`, default 3:
    /// HAProxy's `fall` default).
    public var fall = 3
    /// Consecutive passed checks that bring a down node up (`--upstream-rise`, default 2:
    /// HAProxy's `rise` default).
    public var rise = 2

    public init(interval: TimeAmount? = nil) {
        self.interval = interval
    }

    /// Whether an answer to `GET /` passes: any HTTP status below 500. Sync Gateway's root
    /// answers 200; a node whose HTTP side answers 4xx (a proxy's 404 in front of it) still
    /// serves; 5xx is the node saying it cannot (503 while starting or going away).
    public static func passes(status code: UInt) -> Bool { code < 500 }
}
