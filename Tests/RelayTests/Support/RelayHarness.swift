import BLIPCore
import BLIPNIO
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import Relay

struct TimeoutError: Error {}

/// Runs `body`, failing after `seconds` (every wait in these tests is bounded). The body is not
/// awaited past the deadline: NIO futures do not observe task cancellation.
func withTimeout<T: Sendable>(_ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let once = ResumeOnce<T>()
    return try await withCheckedThrowingContinuation { continuation in
        once.set(continuation)
        Task { do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) } }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            once.resume(.failure(TimeoutError()))
        }
    }
}

/// Resumes a continuation exactly once, whoever comes first.
final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NIOLock()
    private var continuation: CheckedContinuation<T, any Error>?

    func set(_ continuation: CheckedContinuation<T, any Error>) { lock.withLock { self.continuation = continuation } }

    func resume(_ result: Result<T, any Error>) {
        let taken = lock.withLock { () -> CheckedContinuation<T, any Error>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(with: result)
    }
}

/// Records every relay event and lets a test wait for one.
final class RecordingObserver: RelayObserver, Sendable {
    let interests: RelayEventInterests
    private let log = EventLog<RelayEvent>()

    init(interests: RelayEventInterests = .all) { self.interests = interests }

    func observe(_ event: RelayEvent) { log.append(event) }

    var all: [RelayEvent] { log.all }

    /// The first event (past or future) matching `predicate`; throws after `seconds`.
    func first(within seconds: Double = 60, _ predicate: @escaping @Sendable (RelayEvent) -> Bool) async throws -> RelayEvent {
        try await log.first(within: seconds) { _, event in predicate(event) }
    }

    /// What `extract` takes from the first event (past or future) it takes something from; throws
    /// after `seconds`. A test reads the case it waited for without a `guard … else { return }`
    /// that would let it pass having checked nothing.
    func first<Value>(within seconds: Double = 60, extracting extract: @escaping @Sendable (RelayEvent) -> Value?)
        async throws -> Value {
        let event = try await log.first(within: seconds) { _, event in extract(event) != nil }
        return try #require(extract(event))
    }

    func sessionClosed() async throws -> SessionSummary {
        guard case .sessionClosed(let summary) = try await first({ if case .sessionClosed = $0 { true } else { false } })
        else { fatalError() }
        return summary
    }
}

/// An upstream BLIP server, a relay in front of it, and a way to dial clients through the relay.
final class RelayHarness: Sendable {
    let group: MultiThreadedEventLoopGroup
    let upstream: BLIPWebSocketServer
    let relay: RelayServer
    let relayAddress: SocketAddress
    let recorder: RecordingObserver
    /// The upstream's accepted connections, in the order it accepted them.
    let upstreamConnections: EventLog<BLIPConnection>
    let clientTLS: BLIPClientTLS?

    private init(group: MultiThreadedEventLoopGroup, upstream: BLIPWebSocketServer, relay: RelayServer,
                 relayAddress: SocketAddress, recorder: RecordingObserver,
                 upstreamConnections: EventLog<BLIPConnection>, clientTLS: BLIPClientTLS?) {
        self.group = group
        self.upstream = upstream
        self.relay = relay
        self.relayAddress = relayAddress
        self.recorder = recorder
        self.upstreamConnections = upstreamConnections
        self.clientTLS = clientTLS
    }

    /// Echo upstream: each request is answered with its own properties and body (compressed if it was).
    static let echo: @Sendable (BLIPMessage, BLIPChannelHandler) -> Void = { request, handler in
        guard !request.isNoReply else { return }
        if request.properties["Fail"] != nil {
            handler.sendReply(.error(to: request.number, domain: "HTTP", code: 404, message: "missing"))
            return
        }
        handler.sendReply(.reply(to: request, properties: request.properties, body: request.body,
                                 compressed: request.isCompressed))
    }

    /// An echo upstream (``echo``) on `group`, for tests that run a relay of their own (another
    /// process, another event loop group) in front of it.
    static func echoUpstream(group: EventLoopGroup) async throws -> BLIPWebSocketServer {
        var configuration = BLIPWebSocketServer.Configuration()
        configuration.onRequest = echo
        return try await BLIPWebSocketServer.start(configuration, group: group)
    }

    /// A BLIP client (`BLIP_3+CBMobile_3`) connected to a relay on loopback `port`.
    static func client(to port: Int, group: EventLoopGroup) async throws -> BLIPConnection {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = port
        configuration.subprotocols = ["BLIP_3+CBMobile_3"]
        let frozen = configuration
        let outcome = try await withTimeout { try await BLIPWebSocketClient.connect(frozen, group: group) }
        guard let connection = outcome.connection else { throw TimeoutError() }
        return connection
    }

    /// `threads: 1` puts the upstream, the relay and every client on one event loop, so that the
    /// order of their timers and reads is the loop's, whatever the machine's load.
    static func start(upstream configureUpstream: (inout BLIPWebSocketServer.Configuration) -> Void = { _ in },
                      relay configureRelay: (inout RelayConfiguration) -> Void = { _ in },
                      clientTLS: BLIPClientTLS? = nil,
                      observers: [any RelayObserver] = [],
                      recording: RelayEventInterests = .all,
                      threads: Int = 2) async throws -> RelayHarness {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let connections = EventLog<BLIPConnection>()
        var upstreamConfiguration = BLIPWebSocketServer.Configuration()
        upstreamConfiguration.onRequest = echo
        upstreamConfiguration.onConnection = { connection in connections.append(connection) }
        configureUpstream(&upstreamConfiguration)
        let upstream = try await BLIPWebSocketServer.start(upstreamConfiguration, group: group)
        let scheme = upstreamConfiguration.tls == nil ? "ws" : "wss"
        var relayConfiguration = RelayConfiguration(
            upstream: .single(UpstreamURL("\(scheme)://127.0.0.1:\(upstream.localAddress.port!)")!))
        relayConfiguration.listenPort = 0
        // Handshakes get two minutes unless a test is about their limits: on a loaded machine the
        // relay's ten-second defaults could answer a slow test client 408 or 504 first.
        relayConfiguration.clientHandshakeTimeout = .seconds(120)
        relayConfiguration.upstreamHandshakeTimeout = .seconds(120)
        configureRelay(&relayConfiguration)
        let recorder = RecordingObserver(interests: recording)
        var logger = Logger(label: "relay-test")
        logger.logLevel = .error
        let relay = RelayServer(configuration: relayConfiguration, group: group, logger: logger, observers: observers + [recorder])
        let address = try await relay.start()
        return RelayHarness(group: group, upstream: upstream, relay: relay, relayAddress: address, recorder: recorder,
                            upstreamConnections: connections, clientTLS: clientTLS)
    }

    func connect(path: String = "/db/_blipsync", subprotocols: [String] = ["BLIP_3+CBMobile_4", "BLIP_3+CBMobile_3"],
                 headers: HTTPHeaders = [:],
                 configure: (inout BLIPWebSocketClient.Configuration) -> Void = { _ in }) async throws -> BLIPWebSocketClient.Outcome {
        var configuration = BLIPWebSocketClient.Configuration()
        configuration.port = relayAddress.port!
        configuration.path = path
        configuration.subprotocols = subprotocols
        configuration.headers = headers
        configuration.tls = clientTLS
        configuration.onRequest = RelayHarness.echo
        configure(&configuration)
        let frozen = configuration
        let group = self.group
        return try await withTimeout { try await BLIPWebSocketClient.connect(frozen, group: group) }
    }

    func connected() async throws -> BLIPConnection {
        let outcome = try await connect()
        guard let connection = outcome.connection else { throw TimeoutError() }
        return connection
    }

    /// The upstream's `index`-th connection (in the order the upstream accepted them). The
    /// upstream registers a connection only after its 101 went out, so the relay may have
    /// answered the client first: this waits (bounded) for it.
    func upstream(_ index: Int = 0) async throws -> BLIPConnection {
        try await upstreamConnections.first { position, _ in position == index }
    }

    func shutdown() async throws {
        try await relay.shutdown()
        try? await upstream.close()
        try await group.shutdownGracefully()
    }
}

func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

/// The HTTP answer of a handshake the relay refused; nil if the client got in.
func refusal(_ outcome: BLIPWebSocketClient.Outcome) -> (status: HTTPResponseStatus, headers: HTTPHeaders, body: String)? {
    if case .refused(let status, let headers, let body) = outcome { return (status, headers, body) }
    return nil
}

/// The replies to requests sent earlier, in the order sent (bounded wait).
func replies(to pending: [EventLoopFuture<BLIPMessage>]) async throws -> [BLIPMessage] {
    try await withTimeout {
        var replies: [BLIPMessage] = []
        for future in pending { replies.append(try await future.get()) }
        return replies
    }
}
