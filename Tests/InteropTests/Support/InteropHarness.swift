import BLIPCore
import Foundation
import Gateway
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Policy
import Relay

/// The embedded gateway and a relay in front of it, on loopback, for real clients to use.
final class InteropHarness: Sendable {
    let group: MultiThreadedEventLoopGroup
    let gateway: GatewayServer
    let databases: [GatewayDatabase]
    let relay: RelayServer
    let relayPort: Int
    let events: EventCounter

    var database: GatewayDatabase { databases[0] }

    /// The database `name` through the relay (`wss` when the relay serves TLS).
    func url(_ name: String = "db", secure: Bool = false) -> String {
        "\(secure ? "wss" : "ws")://127.0.0.1:\(relayPort)/\(name)"
    }

    private init(group: MultiThreadedEventLoopGroup, gateway: GatewayServer, databases: [GatewayDatabase],
                 relay: RelayServer, relayPort: Int, events: EventCounter) {
        self.group = group
        self.gateway = gateway
        self.databases = databases
        self.relay = relay
        self.relayPort = relayPort
        self.events = events
    }

    /// `observers`: more observers of the relay's events, after the harness's own counter.
    static func start(databases names: [String] = ["db"], seed: (GatewayDatabase) throws -> Void = { _ in },
                      observers: [any RelayObserver] = [],
                      relay configure: (inout RelayConfiguration) throws -> Void = { _ in }) async throws -> InteropHarness {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let databases = names.map { GatewayDatabase(name: $0) }
        try seed(databases[0])
        var gatewayConfiguration = GatewayConfiguration(databases: databases)
        gatewayConfiguration.port = 0
        let gateway = try await GatewayServer.start(gatewayConfiguration, group: group)
        var configuration = RelayConfiguration(upstream: .single(UpstreamURL(secure: false, host: "127.0.0.1",
                                                                             port: gateway.port)))
        configuration.listenPort = 0
        try configure(&configuration)
        let (relay, port, events) = try await startRelay(configuration, group: group, observers: observers)
        return InteropHarness(group: group, gateway: gateway, databases: databases, relay: relay,
                              relayPort: port, events: events)
    }

    /// A relay with `configuration` on `group` (logging errors only), its events counted and
    /// seen by `observers` too.
    static func startRelay(_ configuration: RelayConfiguration, group: EventLoopGroup,
                           observers: [any RelayObserver] = []) async throws -> (relay: RelayServer, port: Int, events: EventCounter) {
        let events = EventCounter()
        var logger = Logger(label: "interop.relay")
        logger.logLevel = .error
        let relay = RelayServer(configuration: configuration, group: group, logger: logger, observers: [events] + observers)
        let address = try await relay.start()
        return (relay, address.port!, events)
    }

    func shutdown() async throws {
        try await relay.shutdown()
        try await gateway.stop()
        try await group.shutdownGracefully()
    }
}

/// Counts what a real client's sessions through the relay did: decode errors, closes, verdicts,
/// the `rev`s that reached the client, by document, and the client's answers to them.
/// It asks for the analysis, so each session summary carries the analyzer's account.
final class EventCounter: RelayObserver, Sendable {
    let interests: RelayEventInterests = [.sessions, .messages, .analysis]
    private let state = NIOLockedValueBox(State())

    struct State {
        var decodeErrors = 0
        var summaries: [SessionSummary] = []
        /// Handshakes the relay refused (its own refusals and the upstream's, passed on).
        var refusals: [HandshakeRefusal] = []
        var verdicts: [VerdictEvent] = []
        var revsToClient: [String] = []
        /// The client's RPYs to `rev` requests: each one stored (LiteCore answers after it commits).
        var revsStoredByClient = 0
        /// The documents of those answered revs.
        var storedByClient: Set<String> = []
        /// Revs sent to the client, by session and number, awaiting its answer.
        var revRequests: [String: String] = [:]
        /// Replies to `getAttachment`, either way: the body bytes the relay held of each, and its length.
        var attachmentReplies: [(held: Int, length: Int)] = []
        var waiters: [UUID: (condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
    }

    func observe(_ event: RelayEvent) {
        var resumed: [CheckedContinuation<Void, Never>] = []
        state.withLockedValue { state in
            switch event {
            case .decodeError: state.decodeErrors += 1
            case .sessionClosed(let summary): state.summaries.append(summary)
            case .handshakeRefused(let refusal): state.refusals.append(refusal)
            case .verdict(let verdict): state.verdicts.append(verdict)
            case .message(let message) where message.direction == .serverToClient && message.message.profile == "rev":
                if let id = message.message.properties["id"] {
                    state.revsToClient.append(id)
                    state.revRequests["\(message.sessionID)/\(message.message.number)"] = id
                }
            case .message(let message) where message.direction == .clientToServer && message.requestProfile == "rev"
                && message.message.type == .response:
                state.revsStoredByClient += 1
                if let id = state.revRequests.removeValue(forKey: "\(message.sessionID)/\(message.message.number)") {
                    state.storedByClient.insert(id)
                }
            case .message(let message) where message.requestProfile == "getAttachment" && message.message.type == .response:
                state.attachmentReplies.append((message.message.body.readableBytes, message.message.bodyLength))
            default: return
            }
            for (key, waiter) in state.waiters where waiter.condition(state) {
                resumed.append(waiter.continuation)
                state.waiters[key] = nil
            }
        }
        for continuation in resumed { continuation.resume() }
    }

    var decodeErrors: Int { state.withLockedValue { $0.decodeErrors } }
    var summaries: [SessionSummary] { state.withLockedValue { $0.summaries } }
    var refusals: [HandshakeRefusal] { state.withLockedValue { $0.refusals } }
    var verdicts: [VerdictEvent] { state.withLockedValue { $0.verdicts } }
    var attachmentReplies: [(held: Int, length: Int)] { state.withLockedValue { $0.attachmentReplies } }

    /// True once `condition` holds, false when `seconds` passed first (the bound of a wait, not a
    /// synchronization: the condition is an event's).
    func wait(atMost seconds: Double, until condition: @escaping @Sendable (State) -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(until: condition); return !Task.isCancelled }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns once `condition` holds (re-checked on every event), or the task is cancelled.
    func wait(until condition: @escaping @Sendable (State) -> Bool) async {
        let key = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLockedValue { state -> Bool in
                    if condition(state) || Task.isCancelled { return true }
                    state.waiters[key] = (condition, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { $0.waiters.removeValue(forKey: key) }?.continuation.resume()
        }
    }
}
