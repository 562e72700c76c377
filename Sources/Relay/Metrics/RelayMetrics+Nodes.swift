import MetricCatalog
import Metrics

/// The per-node metrics (`node` = ``UpstreamNode/label``): sessions from the session events
/// (``MetricsObserver``), health and check failures from the ``UpstreamBalancer``.
extension RelayMetrics {
    /// Makes every series of `node` appear (at zero, up) before anything happens to it.
    func precreate(node: UpstreamNode) {
        let labels = [("node", node.label)]
        _ = meter(MetricCatalog.upstreamNodeSessionsActive, labels)
        _ = counter(MetricCatalog.upstreamNodeSessionsTotal, labels)
        _ = counter(MetricCatalog.upstreamNodeCheckFailuresTotal, labels)
        meter(MetricCatalog.upstreamNodeUp, labels).set(1)
        for reason in UpstreamFailure.allCases {
            _ = counter(MetricCatalog.upstreamNodeSkipsTotal, [("node", node.label), ("reason", reason.rawValue)])
        }
    }

    /// The live-sessions gauge of the node a session went to (``SessionInfo/node``).
    func nodeSessions(_ node: UpstreamNode) -> Meter { meter(MetricCatalog.upstreamNodeSessionsActive, [("node", node.label)]) }

    func nodeSessionOpened(_ node: UpstreamNode) {
        counter(MetricCatalog.upstreamNodeSessionsTotal, [("node", node.label)]).increment()
        nodeSessions(node).increment()
    }

    func nodeHealth(_ node: UpstreamNode, up: Bool) {
        meter(MetricCatalog.upstreamNodeUp, [("node", node.label)]).set(up ? 1 : 0)
    }

    func nodeCheckFailed(_ node: UpstreamNode) {
        counter(MetricCatalog.upstreamNodeCheckFailuresTotal, [("node", node.label)]).increment()
    }

    func nodeSkipped(_ node: UpstreamNode, reason: UpstreamFailure) {
        counter(MetricCatalog.upstreamNodeSkipsTotal, [("node", node.label), ("reason", reason.rawValue)]).increment()
    }
}
