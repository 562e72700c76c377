import CoreMetrics
import MetricCatalog
import Prometheus

/// The swift-metrics backend for the relay's metrics: swift-prometheus's registry, with each
/// metric's HELP line from ``MetricCatalog`` (swift-prometheus's own factory writes none, and
/// `promtool check metrics` flags every metric without one).
///
/// A name without help text gets none (a registry keeps one help text per name; mixing would
/// stop the process). Counters are counters, meters gauges, timers duration histograms with
/// `durationBuckets`, aggregating recorders value histograms with `valueBuckets`.
public struct RelayMetricsFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry
    public var durationBuckets: [Duration]
    public var valueBuckets: [Double]

    public init(registry: PrometheusCollectorRegistry, durationBuckets: [Duration],
                valueBuckets: [Double] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]) {
        self.registry = registry
        self.durationBuckets = durationBuckets
        self.valueBuckets = valueBuckets
    }

    private func describe(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: MetricCatalog.named(label)?.help ?? "")
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: describe(label), labels: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: describe(label), labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: describe(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: describe(label), labels: dimensions, buckets: valueBuckets)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: describe(label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: describe(label), labels: dimensions, buckets: durationBuckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        switch handler {
        case let gauge as Prometheus.Gauge: registry.unregisterGauge(gauge)
        case let histogram as Histogram<Double>: registry.unregisterValueHistogram(histogram)
        default: break
        }
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? Histogram<Duration> { registry.unregisterDurationHistogram(histogram) }
    }
}
