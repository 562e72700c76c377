/// The relay's Sync Gateway nodes as a value: each node's health and live sessions, and which
/// node a new session on a route goes to. Pure: it takes events (``handle(_:)``) and answers
/// ``pick(_:excluding:)``; ``UpstreamBalancer`` holds it under a lock and does the I/O.
///
/// A pick is the route's up node with the fewest live sessions, ties going round robin from the
/// node after the last one picked. It counts as a live session of that node from the pick on (so
/// concurrent handshakes spread too) until ``Event/released(_:)``. Only when no node of the
/// route is up does the pick take a down one (Envoy's "panic" idea): the client then gets the
/// node's real answer, and a node back before its checks see it serves again.
///
/// Health follows HAProxy's fall/rise: ``UpstreamHealthChecks/fall`` failed checks in a row
/// take an up node down, ``UpstreamHealthChecks/rise`` passed ones bring it back. A node starts
/// up but unconfirmed, as HAProxy's default `init-state`: its first failed check takes it down
/// at once, and it counts towards readiness only once a check passed.
struct UpstreamPool: Sendable {
    struct NodeState: Sendable, Equatable {
        var node: UpstreamNode
        var up = true
        /// A check has passed since the relay started (readiness waits for it).
        var confirmed = false
        var failuresInARow = 0
        var passesInARow = 0
        /// Sessions picked for this node and not yet released (handshakes in flight included).
        var live = 0
        /// Sessions the node upgraded.
        var opened = 0
    }

    enum Event: Sendable, Equatable {
        /// The node answered the session's upgrade with 101.
        case opened(Int)
        /// A picked session is over: it ended, or its dial to this node failed.
        case released(Int)
        /// A background check passed or failed.
        case checked(Int, passed: Bool)
        /// A session's dial found no one listening (TCP refused, unreachable): counted as a failed
        /// check, since no client can cause it (the shell reports it only while checks run, which
        /// can bring the node back). HTTP refusals and timeouts are not: a hostile client must not
        /// take nodes down.
        case unreachable(Int)
    }

    /// A node changed state; each is reported once, as it happens.
    enum Transition: Sendable, Equatable {
        case wentDown(UpstreamNode, failures: Int)
        case cameUp(UpstreamNode)
    }

    private(set) var nodes: [NodeState] = []
    private let settings: UpstreamHealthChecks
    /// Each route's nodes (indexes into ``nodes``), in configuration order.
    private var routes: [UpstreamRoute: [Int]] = [:]
    /// Per route, where the round robin among equally loaded nodes starts next.
    private var cursors: [UpstreamRoute: Int] = [:]

    init(routing: UpstreamRouting, settings: UpstreamHealthChecks) {
        self.settings = settings
        for (route, urls) in routing.routes {
            var indexes: [Int] = []
            for url in urls {
                if nodes.firstIndex(where: { $0.node == url.node }) == nil { nodes.append(NodeState(node: url.node)) }
                if let index = nodes.firstIndex(where: { $0.node == url.node }), !indexes.contains(index) { indexes.append(index) }
            }
            routes[route] = indexes
        }
    }

    /// The index of `node`, when it is one of the pool's.
    func index(of node: UpstreamNode) -> Int? { nodes.firstIndex { $0.node == node } }

    /// The route's nodes, in configuration order.
    func nodes(of route: UpstreamRoute) -> [Int] { routes[route] ?? [] }

    /// The node a new session on `route` goes to, skipping the nodes in `tried` (a session tries
    /// each node once); nil when none is left. The pick counts as a live session of the node.
    mutating func pick(_ route: UpstreamRoute, excluding tried: Set<Int> = []) -> Int? {
        let all = routes[route] ?? []
        let anyUp = all.contains { nodes[$0].up }
        let candidates = all.indices.filter { !tried.contains(all[$0]) && (nodes[all[$0]].up || !anyUp) }
        guard let fewest = candidates.map({ nodes[all[$0]].live }).min() else { return nil }
        let start = cursors[route, default: 0]
        let tied = candidates.filter { nodes[all[$0]].live == fewest }
        let position = tied.first { $0 >= start } ?? tied[0]
        cursors[route] = (position + 1) % all.count
        nodes[all[position]].live += 1
        return all[position]
    }

    /// Applies `event`; returns the node's change of state, if it made one.
    mutating func handle(_ event: Event) -> Transition? {
        switch event {
        case .opened(let index):
            nodes[index].opened += 1
            return nil
        case .released(let index):
            nodes[index].live = max(0, nodes[index].live - 1)
            return nil
        case .checked(let index, let passed):
            return passed ? recordPass(index) : recordFailure(index)
        case .unreachable(let index):
            return recordFailure(index)
        }
    }

    private mutating func recordPass(_ index: Int) -> Transition? {
        nodes[index].failuresInARow = 0
        nodes[index].confirmed = true
        guard !nodes[index].up else { return nil }
        nodes[index].passesInARow += 1
        guard nodes[index].passesInARow >= settings.rise else { return nil }
        nodes[index].up = true
        nodes[index].passesInARow = 0
        return .cameUp(nodes[index].node)
    }

    private mutating func recordFailure(_ index: Int) -> Transition? {
        nodes[index].passesInARow = 0
        guard nodes[index].up else { return nil }
        nodes[index].failuresInARow += 1
        guard nodes[index].failuresInARow >= settings.fall || !nodes[index].confirmed else { return nil }
        nodes[index].up = false
        defer { nodes[index].failuresInARow = 0 }
        return .wentDown(nodes[index].node, failures: nodes[index].failuresInARow)
    }

    /// Whether every route has a node that is up and whose check has passed, and for each route
    /// that has none, why. `checked`: false when checks are off (then up is enough).
    func readiness(checked: Bool) -> UpstreamReadiness {
        var reasons: [String] = []
        for (route, indexes) in routes.sorted(by: { $0.key.description < $1.key.description }) {
            let ready = indexes.contains { nodes[$0].up && (nodes[$0].confirmed || !checked) }
            guard !ready else { continue }
            let states = indexes.map { "\(nodes[$0].node.label) \(nodes[$0].up ? "not checked yet" : "down")" }
            reasons.append("\(route): no healthy node (\(states.joined(separator: ", ")))")
        }
        return UpstreamReadiness(reasons: reasons)
    }
}
