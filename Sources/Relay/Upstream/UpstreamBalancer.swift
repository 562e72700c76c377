import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// The shell around the ``UpstreamPool``: holds it under a lock for every handshake's pick, runs
/// the background health checks (``UpstreamHealthProbe``, one repeating task per node), and says
/// what changed: each node going down or up is logged once and sets `blipscope_upstream_node_up`;
/// each failed check and each node a dial passed over is counted per node.
final class UpstreamBalancer: Sendable {
    let routing: UpstreamRouting
    let checks: UpstreamHealthChecks
    private let pool: NIOLockedValueBox<UpstreamPool>
    private let group: any EventLoopGroup
    private let probe: UpstreamHealthProbe
    private let logger: Logger
    private let metrics: RelayMetrics?
    /// The repeating checks, and whether ``stop()`` was called.
    private let tasks = NIOLockedValueBox<(running: [RepeatedTask], stopped: Bool)>(([], false))
    /// Each node's first check, once started (readiness waits for them).
    private let firstChecks = NIOLockedValueBox<[EventLoopFuture<Void>]>([])

    init(routing: UpstreamRouting, checks: UpstreamHealthChecks, group: any EventLoopGroup,
         sslContext: NIOSSLContext?, logger: Logger, metrics: RelayMetrics?) {
        self.routing = routing
        self.checks = checks
        let pool = UpstreamPool(routing: routing, settings: checks)
        self.pool = NIOLockedValueBox(pool)
        self.group = group
        self.probe = UpstreamHealthProbe(sslContext: sslContext, timeout: checks.timeout)
        self.logger = logger
        self.metrics = metrics
        for state in pool.nodes { metrics?.precreate(node: state.node) }
    }

    /// The nodes, in the pool's order (an index is a node's place here).
    var nodes: [UpstreamPool.NodeState] { pool.withLockedValue { $0.nodes } }

    /// The state of `node`, when it is one of the relay's.
    func state(of node: UpstreamNode) -> UpstreamPool.NodeState? {
        pool.withLockedValue { pool in pool.index(of: node).map { pool.nodes[$0] } }
    }

    // MARK: sessions

    /// The node a new session on `route` goes to, other than those in `tried`.
    func pick(_ route: UpstreamRoute, excluding tried: Set<Int>) -> (index: Int, node: UpstreamNode)? {
        pool.withLockedValue { pool in pool.pick(route, excluding: tried).map { ($0, pool.nodes[$0].node) } }
    }

    /// The node upgraded a session.
    func opened(_ index: Int) { apply(.opened(index)) }

    /// A picked session is over (it ended, or was refused).
    func released(_ index: Int) { apply(.released(index)) }

    /// A dial to node `index` failed for a reason that is the node's: the session passes to the
    /// next node. Counted, and `logged` (a route of several nodes). With checks on, a node no one
    /// answers at counts as a failed check (without, nothing would bring it back up).
    func skipped(_ index: Int, session: UInt64, reason: UpstreamFailure, logged: Bool, detail: String) {
        apply(.released(index))
        let node = pool.withLockedValue { $0.nodes[index].node }
        metrics?.nodeSkipped(node, reason: reason)
        if logged {
            logger.warning("upstream node \(node.label) failed session \(session) before its 101 (\(detail)); the session goes to the route's next node, if one is left")
        }
        if reason == .unreachable, checks.interval != nil { apply(.unreachable(index)) }
    }

    // MARK: checks

    /// Starts the background checks (none when ``UpstreamHealthChecks/interval`` is nil): each
    /// node at once, then every interval after its last check ended.
    func start() {
        guard let interval = checks.interval else { return }
        let nodes = pool.withLockedValue { $0.nodes.map(\.node) }
        var first: [EventLoopFuture<Void>] = []
        for (index, node) in nodes.enumerated() {
            let loop = group.next()
            let check = probe.check(node, on: loop).map { [self] result in record(index, result) }
            check.whenComplete { [self] _ in
                tasks.withLockedValue { tasks in
                    guard !tasks.stopped else { return }
                    tasks.running.append(loop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { [self] _ in
                        probe.check(node, on: loop).map { [self] result in record(index, result) }
                    })
                }
            }
            first.append(check)
        }
        firstChecks.withLockedValue { $0 = first }
    }

    /// Stops the checks.
    func stop() {
        let running = tasks.withLockedValue { tasks in
            defer { tasks = ([], true) }
            return tasks.running
        }
        for task in running { task.cancel() }
    }

    private func record(_ index: Int, _ result: Result<UInt, RelayError>) {
        let passed: Bool
        switch result {
        case .success(let status): passed = UpstreamHealthChecks.passes(status: status)
        case .failure: passed = false
        }
        if !passed {
            let node = pool.withLockedValue { $0.nodes[index].node }
            metrics?.nodeCheckFailed(node)
            let why = (try? result.get()).map { "answered \($0)" } ?? "\(result)"
            logger.debug("upstream node \(node.label) check failed: \(why)")
        }
        apply(.checked(index, passed: passed))
    }

    private func apply(_ event: UpstreamPool.Event) {
        guard let transition = pool.withLockedValue({ $0.handle(event) }) else { return }
        switch transition {
        case .wentDown(let node, let failures):
            metrics?.nodeHealth(node, up: false)
            logger.warning("upstream node \(node.label) is down after \(failures) failed check\(failures == 1 ? "" : "s"): it gets no new sessions while another node of its route is up")
        case .cameUp(let node):
            metrics?.nodeHealth(node, up: true)
            logger.notice("upstream node \(node.label) is up again after \(checks.rise) passed check\(checks.rise == 1 ? "" : "s")")
        }
    }

    // MARK: readiness

    /// Whether every route has a healthy node (``UpstreamReadiness``). With checks, once each
    /// node's first check has ended (bounded by the check timeout), from the checks' state;
    /// without, from whether each node accepts a TCP connection now, within `probeTimeout`.
    func readiness(probeTimeout: TimeAmount) async -> UpstreamReadiness {
        guard checks.interval == nil else {
            for check in firstChecks.withLockedValue({ $0 }) { try? await check.get() }
            return pool.withLockedValue { $0.readiness(checked: true) }
        }
        var accepting = Set<UpstreamNode>()
        for state in nodes {
            let bootstrap = ClientBootstrap(group: group).connectTimeout(probeTimeout)
            if let channel = try? await bootstrap.connect(host: state.node.host, port: state.node.port).get() {
                accepting.insert(state.node)
                try? await channel.close()
            }
        }
        let reasons = routing.routes.compactMap { entry -> String? in
            entry.nodes.contains { accepting.contains($0.node) } ? nil
                : "\(entry.route): no node accepts a connection (\(entry.nodes.map(\.node.label).joined(separator: ", ")))"
        }
        return UpstreamReadiness(reasons: reasons)
    }
}
