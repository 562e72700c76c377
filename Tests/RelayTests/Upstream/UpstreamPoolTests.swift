import NIOCore
import Testing
@testable import Relay

/// The pool as a value: picks, live counts and fall/rise, without sockets.
@Suite struct UpstreamPoolTests {
    static let a = UpstreamURL("ws://10.0.0.1:4984")!, b = UpstreamURL("ws://10.0.0.2:4984")!, c = UpstreamURL("ws://10.0.0.3:4984/sg")!

    static func pool(_ urls: [UpstreamURL] = [a, b, c], fall: Int = 3, rise: Int = 2) -> UpstreamPool {
        var checks = UpstreamHealthChecks(interval: .seconds(5))
        checks.fall = fall
        checks.rise = rise
        return UpstreamPool(routing: UpstreamRouting(defaultNodes: urls), settings: checks)
    }

    /// Every node's first check passes (a node counts for readiness only then).
    static func confirmed(_ pool: UpstreamPool) -> UpstreamPool {
        var pool = pool
        for index in pool.nodes.indices { #expect(pool.handle(.checked(index, passed: true)) == nil) }
        return pool
    }

    @Test func equalNodesAreTakenInTurnThenTheLeastLoaded() {
        var pool = Self.pool()
        #expect([pool.pick(.fallback), pool.pick(.fallback), pool.pick(.fallback)] == [0, 1, 2])
        #expect(pool.nodes.map(\.live) == [1, 1, 1])
        _ = pool.handle(.released(1))
        #expect(pool.pick(.fallback) == 1, "node 1 has the fewest live sessions")
        _ = pool.handle(.released(2))
        _ = pool.handle(.released(0))
        #expect(pool.pick(.fallback) == 2, "0 and 2 tie at none; the turn after node 1 is node 2")
        #expect(pool.pick(.fallback) == 0)
        #expect(pool.nodes.map(\.live) == [1, 1, 1])
    }

    @Test func openedCountsSessionsWithoutChangingTheLiveCount() {
        var pool = Self.pool()
        let index = pool.pick(.fallback)!
        _ = pool.handle(.opened(index))
        #expect(pool.nodes[index].opened == 1 && pool.nodes[index].live == 1)
        _ = pool.handle(.released(index))
        _ = pool.handle(.released(index))
        #expect(pool.nodes[index].live == 0, "never below zero")
    }

    @Test func aSessionTriesEachNodeOnceThenNone() {
        var pool = Self.pool()
        let first = pool.pick(.fallback)!
        let second = pool.pick(.fallback, excluding: [first])!
        let third = pool.pick(.fallback, excluding: [first, second])!
        #expect(Set([first, second, third]) == [0, 1, 2])
        #expect(pool.pick(.fallback, excluding: [0, 1, 2]) == nil)
    }

    @Test func aDownNodeGetsNoSessionWhileAnotherIsUp() {
        var pool = Self.confirmed(Self.pool(fall: 2))
        #expect(pool.handle(.checked(1, passed: false)) == nil, "one failure of two")
        #expect(pool.handle(.checked(1, passed: false)) == .wentDown(Self.b.node, failures: 2))
        #expect(pool.handle(.checked(1, passed: false)) == nil, "down is reported once")
        let picks = (0..<6).map { _ in pool.pick(.fallback)! }
        #expect(!picks.contains(1))
        #expect(picks.filter { $0 == 0 }.count == 3 && picks.filter { $0 == 2 }.count == 3)
        #expect(pool.pick(.fallback, excluding: [0, 2]) == nil, "the down node is not tried while others are up")
    }

    @Test func failuresMustBeInARowAndRiseNeedsPassesInARow() {
        var pool = Self.confirmed(Self.pool(fall: 3, rise: 2))
        for _ in 0..<5 {
            #expect(pool.handle(.checked(0, passed: false)) == nil)
            #expect(pool.handle(.checked(0, passed: false)) == nil)
            #expect(pool.handle(.checked(0, passed: true)) == nil, "a pass starts the count again")
        }
        for _ in 0..<2 { _ = pool.handle(.checked(0, passed: false)) }
        #expect(pool.handle(.unreachable(0)) == .wentDown(Self.a.node, failures: 3), "a dial no one answered counts as a failure")
        #expect(pool.handle(.checked(0, passed: true)) == nil)
        #expect(pool.handle(.checked(0, passed: false)) == nil)
        #expect(pool.handle(.checked(0, passed: true)) == nil, "passes must be in a row")
        #expect(pool.handle(.checked(0, passed: true)) == .cameUp(Self.a.node))
        #expect(pool.nodes[0].up)
        #expect(pool.handle(.checked(0, passed: true)) == nil, "up is reported once")
    }

    @Test func anUnconfirmedNodeGoesDownOnItsFirstFailure() {
        var pool = Self.pool(fall: 3)
        #expect(pool.handle(.checked(2, passed: false)) == .wentDown(Self.c.node, failures: 1))
        #expect(pool.handle(.checked(0, passed: true)) == nil)
        #expect(pool.handle(.checked(0, passed: false)) == nil, "a confirmed node needs fall failures")
    }

    @Test func withEveryNodeDownTheRouteStillTriesThemAll() {
        var pool = Self.pool(fall: 1)
        for index in 0..<3 { _ = pool.handle(.checked(index, passed: false)) }
        #expect(pool.nodes.allSatisfy { !$0.up })
        let first = pool.pick(.fallback)!
        let second = pool.pick(.fallback, excluding: [first])!
        let third = pool.pick(.fallback, excluding: [first, second])!
        #expect(Set([first, second, third]) == [0, 1, 2], "the client gets a node's real answer")
        #expect(pool.readiness(checked: true).reasons == [
            "default: no healthy node (10.0.0.1:4984 down, 10.0.0.2:4984 down, 10.0.0.3:4984 down)",
        ])
        _ = pool.handle(.checked(1, passed: true))
        _ = pool.handle(.checked(1, passed: true))
        #expect(pool.nodes[1].up)
        #expect((0..<3).map { _ in pool.pick(.fallback)! } == [1, 1, 1], "once one is up, only it")
    }

    @Test func readinessNeedsOneCheckedUpNodePerRoute() {
        let routing = UpstreamRouting(defaultNodes: [Self.a], perDatabaseNodes: ["db": [Self.b, Self.c]])
        var pool = UpstreamPool(routing: routing, settings: UpstreamHealthChecks(interval: .seconds(1)))
        #expect(pool.readiness(checked: false).ready, "without checks, up is enough")
        #expect(pool.readiness(checked: true).reasons.count == 2, "nothing checked yet")
        _ = pool.handle(.checked(0, passed: true))
        _ = pool.handle(.checked(pool.index(of: Self.c.node)!, passed: true))
        #expect(pool.readiness(checked: true).ready)
        _ = pool.handle(.checked(0, passed: false))
        _ = pool.handle(.checked(0, passed: false))
        _ = pool.handle(.checked(0, passed: false))
        #expect(pool.readiness(checked: true).reasons == ["default: no healthy node (10.0.0.1:4984 down)"])
    }

    @Test func routesShareANodeAndItsLoad() {
        let shared = UpstreamURL("ws://10.0.0.1:4984/other")!
        let routing = UpstreamRouting(defaultNodes: [Self.a, Self.b], perDatabaseNodes: ["db": [shared]])
        var pool = UpstreamPool(routing: routing, settings: UpstreamHealthChecks())
        #expect(pool.nodes.count == 2, "one node whatever the prefix")
        #expect(pool.pick(.database("db")) == 0)
        #expect(pool.pick(.fallback) == 1, "node 0 already has the db route's session")
        #expect(pool.pick(.database("nope")) == nil)
    }

    @Test func nodeLabelsAreHostAndPort() {
        #expect(UpstreamURL("wss://user.example:4984/prefix")!.node.label == "user.example:4984")
        #expect(UpstreamURL("ws://[::1]:4984")!.node.label == "[::1]:4984")
        #expect(UpstreamHealthChecks.passes(status: 200) && UpstreamHealthChecks.passes(status: 404))
        #expect(!UpstreamHealthChecks.passes(status: 500) && !UpstreamHealthChecks.passes(status: 503))
    }
}
