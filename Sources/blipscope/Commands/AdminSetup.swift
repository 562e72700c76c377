import BLIPNIO
import CommandLineSupport
import Metrics
import NIOCore
import Prometheus
import Relay
import ServiceLifecycle
import WebView

/// The metrics backend and admin listener of `relay --admin` (GitHub issue 8). Without `--admin`
/// nothing is bootstrapped and no metrics observer is installed, so metrics cost nothing.
struct AdminSetup {
    let configuration: AdminConfiguration
    let observer: MetricsObserver
    let registry: PrometheusCollectorRegistry
    /// The web view's history of sessions; nil with `--no-web`.
    var history: HistoryObserver? = nil
    /// The relay's `--capture` directory and the `<run>` of its file names, for the page's download links.
    var capture: (directory: String, run: String)? = nil

    /// The observers the relay needs for this listener.
    var observers: [any RelayObserver] { [observer] + (history.map { [$0] } ?? []) }

    /// Latency buckets for every histogram (request→reply, upstream connect, rate-limit delay).
    static let buckets: [Duration] = [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
                                      .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                                      .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
                                      .seconds(5), .seconds(10)]

    /// Bootstraps `MetricsSystem` with the Prometheus backend (once per process) and makes the
    /// relay's metrics. `address` is `HOST:PORT`.
    static func make(address: String, token: String?, tls: BLIPServerTLS? = nil, userLabels: Bool) throws -> AdminSetup {
        let (host, port) = try OptionCheck.hostPort(address, option: "--admin")
        let configuration = AdminConfiguration(host: host, port: port, bearerToken: token, tls: tls)
        try configuration.validate()
        let registry = PrometheusCollectorRegistry()
        let factory = RelayMetricsFactory(registry: registry, durationBuckets: buckets)
        MetricsSystem.bootstrap(factory)
        return AdminSetup(configuration: configuration, observer: MetricsObserver(metrics: RelayMetrics(userLabels: userLabels, factory: factory)),
                          registry: registry)
    }

    func service(relay: RelayServer, group: any EventLoopGroup) -> AdminService {
        let registry = registry
        let web = history.map {
            WebAPI(history: $0.history, downloads: capture.map { CaptureFileDownloads(directory: $0.directory, run: $0.run) },
                   now: HistoryObserver.now)
        }
        return AdminService(server: AdminServer(configuration: configuration, group: group, relay: relay, observer: observer,
                                                web: web, metricsText: { registry.emitToBuffer() }),
                            observer: observer, eventLoop: group.next())
    }
}

/// Runs the admin listener and the stuck-session poller until graceful shutdown.
struct AdminService: Service {
    let server: AdminServer
    let observer: MetricsObserver
    let eventLoop: any EventLoop

    func run() async throws {
        // Announced as "admin listener at", never "listening on": that phrase names the relay's
        // own listener, which the bench and scripts look for.
        let address = try await server.start()
        if let port = address.port {
            let host = address.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "127.0.0.1"
            let scheme = server.configuration.tls == nil ? "http" : "https"
            FileHandleOutput.standardError("blipscope relay admin listener at \(scheme)://\(host):\(port)/")
        }
        observer.startPolling(on: eventLoop)
        try? await gracefulShutdown()
        observer.stopPolling()
        try await server.shutdown()
    }
}
