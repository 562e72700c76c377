import MetricCatalog
import Replication
import Metrics
import NIOConcurrencyHelpers

/// The relay's metric objects, made once through whatever `MetricsSystem` was bootstrapped
/// (the executable bootstraps the Prometheus backend only with `--admin`). Per-message metrics
/// are pre-created for every bounded label combination and kept in arrays; metrics whose labels
/// come from traffic (databases, error codes, rules) are cached by label tuple, capped at
/// ``maxLabelValues`` distinct values each (then `other`).
///
/// Other parts of the relay report through the `public` methods here: the policy engine
/// (issue 7) calls ``verdict(rule:action:)`` and ``rateLimitDelayed(rule:nanoseconds:)``; the
/// capture writer calls ``captureWritten(records:bytes:)`` and ``captureDropped(records:)``.
/// All methods are thread-safe.
public final class RelayMetrics: Sendable {
    /// Distinct values kept per traffic-derived label before folding into `other`.
    public static let maxLabelValues = 64
    /// Policy actions the dashboard knows; others are counted as `other`.
    public static let policyActions = ["allow", "deny", "drop", "delay", "modify", "fault", "dry_run", "other"]

    let userLabels: Bool
    private let factory: any MetricsFactory
    let messages: [Counter]            // [direction][type][profile], flattened
    let requestDurations: [Metrics.Timer]  // [profile]
    let frames: [Counter]
    let wireBytes: [Counter]
    let payloadBytes: [Counter]
    let documents: [Counter]
    let revisions: [Counter]
    let tombstones: [Counter]
    let attachmentBytes: [Counter]
    let conflicts: [Counter]           // [profile]
    let stuck: [String: Meter]         // by Finding.Kind raw value
    let upstreamConnect: Metrics.Timer
    let captureRecords: Counter
    let captureBytes: Counter
    let captureDrops: Counter
    let fleetDegraded: Meter
    let fleetFallbacks: Counter
    private let cache = NIOLockedValueBox(LabelCache())

    /// - Parameters:
    ///   - userLabels: count messages and bytes per user name (operator opt-in).
    ///   - factory: the metrics backend; by default the one `MetricsSystem` was bootstrapped with.
    public init(userLabels: Bool = false, factory: any MetricsFactory = MetricsSystem.factory) {
        self.userLabels = userLabels
        self.factory = factory
        let dirs = MetricLabels.directions, profiles = MetricLabels.profiles
        var messages: [Counter] = []
        for direction in dirs {
            for type in MetricLabels.types {
                for profile in profiles {
                    messages.append(Counter(label: MetricCatalog.messagesTotal.name,
                                            dimensions: [("direction", direction), ("type", type), ("profile", profile)], factory: factory))
                }
            }
        }
        self.messages = messages
        requestDurations = profiles.map { Metrics.Timer(label: MetricCatalog.requestDurationSeconds.name, dimensions: [("profile", $0)], factory: factory) }
        conflicts = profiles.map { Counter(label: MetricCatalog.conflictsTotal.name, dimensions: [("profile", $0)], factory: factory) }
        func perDirection(_ metric: MetricDefinition) -> [Counter] { dirs.map { Counter(label: metric.name, dimensions: [("direction", $0)], factory: factory) } }
        frames = perDirection(MetricCatalog.framesTotal)
        wireBytes = perDirection(MetricCatalog.wireBytesTotal)
        payloadBytes = perDirection(MetricCatalog.payloadBytesTotal)
        documents = perDirection(MetricCatalog.documentsTotal)
        revisions = perDirection(MetricCatalog.revisionsTotal)
        tombstones = perDirection(MetricCatalog.tombstonesTotal)
        attachmentBytes = perDirection(MetricCatalog.attachmentBytesTotal)
        stuck = Dictionary(uniqueKeysWithValues: StuckReasons.all.map {
            ($0, Meter(label: MetricCatalog.stuckSessions.name, dimensions: [("reason", $0)], factory: factory))
        })
        upstreamConnect = Metrics.Timer(label: MetricCatalog.upstreamConnectSeconds.name, factory: factory)
        captureRecords = Counter(label: MetricCatalog.captureRecordsTotal.name, factory: factory)
        captureBytes = Counter(label: MetricCatalog.captureBytesTotal.name, factory: factory)
        captureDrops = Counter(label: MetricCatalog.captureDroppedTotal.name, factory: factory)
        fleetDegraded = Meter(label: MetricCatalog.fleetLimitsDegraded.name, factory: factory)
        fleetDegraded.set(0)
        fleetFallbacks = Counter(label: MetricCatalog.fleetLimitsFallbacksTotal.name, factory: factory)
        precreateFamilies()
    }

    /// Makes each label-keyed family appear in a scrape (at zero) before traffic gives it values,
    /// so dashboards and alert rules find every series name.
    private func precreateFamilies() {
        for action in Self.policyActions { _ = counter(MetricCatalog.policyVerdictsTotal, [("rule", "none"), ("action", action)]) }
        _ = timer(MetricCatalog.rateLimitDelaySeconds, [("rule", "none")])
        for status in ["101", "502", "504"] { _ = counter(MetricCatalog.handshakesTotal, [("status", status)]) }
        for reason in UpstreamFailure.allCases { _ = counter(MetricCatalog.upstreamConnectFailuresTotal, [("reason", reason.rawValue)]) }
        for reason in ProxyRefusal.Reason.labels { _ = counter(MetricCatalog.proxyProtocolRefusalsTotal, [("reason", reason)]) }
        for direction in MetricLabels.directions {
            _ = counter(MetricCatalog.decodeFailuresTotal, [("direction", direction), ("kind", "decode_failed")])
        }
        _ = counter(MetricCatalog.errorRepliesTotal, [("profile", "other"), ("domain", "HTTP"), ("code", "409")])
    }

    // MARK: API for the policy engine and the capture writer

    /// A policy rule decided `action` (`allow`, `deny`, `drop`, `delay`, `modify`, `fault`) for a
    /// message. `rule` is the rule's configured name (bounded by the policy file).
    public func verdict(rule: String, action: String) {
        let action = Self.policyActions.contains(action) ? action : "other"
        counter(MetricCatalog.policyVerdictsTotal, [("rule", rule), ("action", action)]).increment()
    }

    /// A rate-limit rule held a request back for `nanoseconds`.
    public func rateLimitDelayed(rule: String, nanoseconds: Int64) {
        timer(MetricCatalog.rateLimitDelaySeconds, [("rule", rule)]).recordNanoseconds(nanoseconds)
    }

    /// The capture writer wrote `records` records of `bytes` bytes in total.
    public func captureWritten(records: Int, bytes: Int) {
        captureRecords.increment(by: Int64(records))
        captureBytes.increment(by: Int64(bytes))
    }

    /// The capture writer dropped `records` records (drop mode, queue full).
    public func captureDropped(records: Int) { captureDrops.increment(by: Int64(records)) }

    /// The fleet limits fell back to local limits (`true`, counted once per fallback) or are
    /// shared through Redis again (`false`).
    public func fleetLimits(degraded: Bool) {
        fleetDegraded.set(degraded ? 1 : 0)
        if degraded { fleetFallbacks.increment() }
    }

    // MARK: label-keyed metrics (not per message)

    func counter(_ metric: MetricDefinition, _ labels: [(String, String)]) -> Counter {
        assert(labels.map(\.0) == metric.labels, "\(metric.name) is labelled \(metric.labels), not \(labels.map(\.0))")
        let name = metric.name
        return cache.withLockedValue { cache in
            let key = cache.key(name, labels)
            if let existing = cache.counters[key] { return existing }
            let made = Counter(label: name, dimensions: key.labels, factory: factory)
            cache.counters[key] = made
            return made
        }
    }

    func meter(_ metric: MetricDefinition, _ labels: [(String, String)]) -> Meter {
        assert(labels.map(\.0) == metric.labels, "\(metric.name) is labelled \(metric.labels), not \(labels.map(\.0))")
        let name = metric.name
        return cache.withLockedValue { cache in
            let key = cache.key(name, labels)
            if let existing = cache.meters[key] { return existing }
            let made = Meter(label: name, dimensions: key.labels, factory: factory)
            cache.meters[key] = made
            return made
        }
    }

    func timer(_ metric: MetricDefinition, _ labels: [(String, String)]) -> Metrics.Timer {
        assert(labels.map(\.0) == metric.labels, "\(metric.name) is labelled \(metric.labels), not \(labels.map(\.0))")
        let name = metric.name
        return cache.withLockedValue { cache in
            let key = cache.key(name, labels)
            if let existing = cache.timers[key] { return existing }
            let made = Metrics.Timer(label: name, dimensions: key.labels, factory: factory)
            cache.timers[key] = made
            return made
        }
    }

    @inline(__always) func messageCounter(direction: Int, type: Int, profile: Int) -> Counter {
        messages[(direction * MetricLabels.types.count + type) * MetricLabels.profiles.count + profile]
    }
}

/// Stuck-session reasons, the `reason` label of ``MetricNames/stuckSessions``.
enum StuckReasons {
    static let all: [String] = Finding.Kind.allCases.filter(\.isStuckReason).map(\.rawValue)
}

/// Metric objects by name and label values, with label values capped per (metric, label).
struct LabelCache {
    struct Key: Hashable {
        var name: String
        var values: [String]
        var names: [String]
        var labels: [(String, String)] { Array(zip(names, values)) }
    }

    var counters: [Key: Counter] = [:]
    var meters: [Key: Meter] = [:]
    var timers: [Key: Metrics.Timer] = [:]
    private var seen: [String: Set<String>] = [:]

    /// The key for `labels`, each value replaced by `other` once its label has had
    /// ``RelayMetrics/maxLabelValues`` distinct values.
    mutating func key(_ name: String, _ labels: [(String, String)]) -> Key {
        var values: [String] = []
        for (label, value) in labels {
            let slot = name + "/" + label
            let known = seen[slot]
            if known?.contains(value) == true {
                values.append(value)
            } else if (known?.count ?? 0) < RelayMetrics.maxLabelValues {
                seen[slot, default: []].insert(value)  // in place, no copy of the set
                values.append(value)
            } else {
                values.append("other")
            }
        }
        return Key(name: name, values: values, names: labels.map(\.0))
    }
}
