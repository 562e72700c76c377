import MetricCatalog

/// What the relay's own metrics (`/metrics` on its admin listener) said at the end of a soak.
public struct RelayCounters: Sendable, Equatable, Codable {
    /// Complete BLIP messages the relay decoded, both directions, every type and profile.
    public var messages = 0
    /// ``MetricCatalog/decodeFailuresTotal``, every direction and kind.
    public var decodeFailures = 0
    /// Sessions the relay opened.
    public var sessions = 0
    /// Sessions it closed, by close reason.
    public var closeReasons: [String: Int] = [:]
    /// Capture bytes written and records dropped (the drop count must stay 0 under back-pressure).
    public var captureBytes = 0
    public var captureDropped = 0
    /// Sessions open at the last scrape.
    public var activeSessions = 0

    public init() {}

    /// Reads the counters from a Prometheus text exposition.
    public init(metrics: MetricsText) {
        messages = metrics.sum(MetricCatalog.messagesTotal.name)
        decodeFailures = metrics.sum(MetricCatalog.decodeFailuresTotal.name)
        sessions = metrics.sum(MetricCatalog.sessionsTotal.name)
        closeReasons = metrics.sums(MetricCatalog.sessionsClosedTotal.name, by: "close_reason")
        captureBytes = metrics.sum(MetricCatalog.captureBytesTotal.name)
        captureDropped = metrics.sum(MetricCatalog.captureDroppedTotal.name)
        activeSessions = metrics.sum(MetricCatalog.sessionsActive.name)
    }
}
