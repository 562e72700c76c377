import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Replication
import WebView

/// The admin HTTP listener (GitHub issue 8): `GET /metrics` (Prometheus text from
/// `metricsText`), `/healthz`, `/readyz` (``Readiness``: the relay listens, does not drain and each route has a healthy node),
/// `/sessions` and `/sessions/{id}` (JSON from the ``MetricsObserver``). HTTP/1.1, GET only,
/// one small handler; when ``AdminConfiguration/bearerToken`` is set every request must carry it.
/// With a ``WebAPI`` it also serves the web view: the page at `/` and `/ui`, its JSON under
/// `/api/` and its live feeds (Server-Sent Events), at most ``WebViewLimits/maxViewers`` at once.
public final class AdminServer: Sendable {
    public let configuration: AdminConfiguration
    private let group: any EventLoopGroup
    let relay: RelayServer
    let observer: MetricsObserver?
    let metricsText: @Sendable () -> [UInt8]
    /// The web view, when the relay keeps a ``SessionHistory``.
    let web: WebAPI?
    let viewerSlots: ViewerSlots
    private let listener = NIOLockedValueBox<(any Channel)?>(nil)

    /// - Parameters:
    ///   - metricsText: the exposition to serve at `/metrics` (the Prometheus registry's `emitToBuffer`).
    ///   - observer: the source of `/sessions`; nil serves an empty list.
    ///   - web: the web view's routes; nil leaves `/`, `/ui` and `/api/` unanswered (404).
    public init(configuration: AdminConfiguration, group: any EventLoopGroup, relay: RelayServer,
                observer: MetricsObserver?, web: WebAPI? = nil, metricsText: @escaping @Sendable () -> [UInt8]) {
        self.web = web
        self.viewerSlots = ViewerSlots(limit: web?.history.limits.maxViewers ?? 0)
        self.configuration = configuration
        self.group = group
        self.relay = relay
        self.observer = observer
        self.metricsText = metricsText
    }

    /// Binds the listener; returns the bound address. Throws for a non-loopback address without a token.
    public func start() async throws -> SocketAddress {
        try configuration.validate()
        let tls = try configuration.tls?.makeContext()
        let access = AdminAccess(tls: tls != nil)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                }.flatMap {
                    channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                }.flatMap {
                    channel.pipeline.addHandler(AdminHandler(server: self, access: access))
                }
            }
            .bind(host: configuration.host, port: configuration.port).get()
        listener.withLockedValue { $0 = channel }
        return channel.localAddress!
    }

    /// The bound address, once started.
    public var localAddress: SocketAddress? { listener.withLockedValue { $0?.localAddress } }

    public func shutdown() async throws {
        let channel = listener.withLockedValue { channel in defer { channel = nil }; return channel }
        try await channel?.close()
    }

    // MARK: answers

    /// Ready when the relay listens, does not drain, and every route has a healthy node
    /// (``RelayServer/upstreamReadiness(probeTimeout:)``; asked only when the rest holds: a
    /// draining relay answers at once).
    func readiness() async -> Readiness {
        var readiness = Readiness(listening: relay.localAddress != nil, draining: relay.isDraining)
        guard readiness.isReady else { return readiness }
        let upstreams = await relay.upstreamReadiness(probeTimeout: .seconds(configuration.upstreamProbeTimeout))
        for reason in upstreams.reasons { readiness.fail(.upstream(reason)) }
        return readiness
    }

    func sessionsJSON() -> String {
        let now = MetricsObserver.now()
        return ReplicationJSON.encode((observer?.liveTracks() ?? []).map { SessionReport($0, now: now) })
    }

    func sessionJSON(id: UInt64) -> String? {
        guard let track = observer?.liveTrack(id) else { return nil }
        return ReplicationJSON.encode(SessionDetail(track, now: MetricsObserver.now()))
    }
}
