import BLIPCore
import Foundation
import MetricCatalog
import Mediation
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import Replication

/// Turns relay events into ``RelayMetrics`` updates and keeps what the admin listener shows about
/// live sessions: each session's one ``SessionAnalyzer`` (``SessionInfo/analyzer``, shared with the
/// log), whose findings and summary `/sessions` reports and whose stuck reasons become the
/// ``MetricCatalog/stuckSessions`` gauge: standing findings (a setCheckpoint 409 loop) as the
/// message that raises or ends one passes, the timed rules at each ``pollStuck(now:)``, and a
/// session's reasons leave the gauge when it closes.
///
/// Per frame it increments three pre-made counters; per message its session's handler (made at
/// open, holding the session's ``SessionTrack``) reads the analyzer's ``MessageEvent/analysis`` and
/// updates counters picked by array index: no lookup of the session. Labelled metrics of a
/// session (database, user) are looked up at open; the table of live tracks is touched at open,
/// at close and by the admin listener's readers.
public final class MetricsObserver: RelayObserver, Sendable {
    public let interests: RelayEventInterests = [.sessions, .messages, .frames, .analysis]
    public let metrics: RelayMetrics
    private let tracks = NIOLockedValueBox([UInt64: SessionTrack]())
    private let poller = NIOLockedValueBox<RepeatedTask?>(nil)
    private let stuck = NIOLockedValueBox(StuckSessions())

    public init(metrics: RelayMetrics) {
        self.metrics = metrics
    }

    /// Seconds on the monotonic clock the analyzers use.
    public static func now() -> Double { ReceiptTime.analyzerNow() }

    // MARK: events

    /// Events given to the observer itself: a refused handshake (no session), or a session's
    /// events when no handler was made for it (looked up by session ID).
    public func observe(_ event: RelayEvent) {
        switch event {
        case .sessionOpened(let info):
            _ = opened(info)
        case .forwarded(let id, let direction, let frames, let bytes):
            let track = track(id)
            forwarded(direction, frames: frames, bytes: bytes, track: track)
            track?.publish()
        case .message(let message):
            let track = track(message.sessionID)
            observeMessage(message, track: track)
            track?.publish()
        default:
            observeSessionless(event)
        }
    }

    public func observe(message event: borrowing MessageEvent) {
        let track = track(event.sessionID)
        observeMessage(copy event, track: track)
        track?.publish()
    }

    /// The session's track, made now; its handler holds it, so no message looks it up.
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
        Handler(observer: self, track: opened(info))
    }

    /// One session's metrics: its track held, relay-wide counters picked by index.
    private final class Handler: SessionObserver {
        let observer: MetricsObserver
        let track: SessionTrack

        init(observer: MetricsObserver, track: SessionTrack) {
            self.observer = observer
            self.track = track
        }

        func observe(_ event: RelayEvent) {
            switch event {
            case .sessionOpened:
                break  // counted when the handler was made
            case .forwarded(_, let direction, let frames, let bytes):
                observer.forwarded(direction, frames: frames, bytes: bytes, track: track)
            case .message(let message):
                observer.observeMessage(message, track: track)
            default:
                observer.observeSessionless(event)
            }
        }

        func observe(message event: borrowing MessageEvent) { observer.observeMessage(copy event, track: track) }
        func batchEnded() { track.publish() }
    }

    /// Undecoded frames: counted as decoded ones are, bar their uncompressed payload.
    private func forwarded(_ direction: BLIPDirection, frames: Int, bytes: Int, track: SessionTrack?) {
        metrics.frames[direction.rawValue].increment(by: Int64(frames))
        metrics.wireBytes[direction.rawValue].increment(by: Int64(bytes))
        if let track {
            track.userBytes?[direction.rawValue].increment(by: Int64(bytes))
            track.countFrame(direction: direction.rawValue, wireBytes: bytes)
        }
    }

    /// The events whose counters need no session: frames, decode failures, refusals, verdicts, closes.
    private func observeSessionless(_ event: RelayEvent) {
        switch event {
        case .frame(let frame):
            let direction = frame.direction.rawValue
            metrics.frames[direction].increment()
            metrics.wireBytes[direction].increment(by: Int64(frame.wireBytes))
            metrics.payloadBytes[direction].increment(by: Int64(frame.payloadBytes))
        case .decodeError(_, let direction, let error):
            metrics.counter(MetricCatalog.decodeFailuresTotal,
                            [("direction", MetricLabels.directions[direction.rawValue]), ("kind", error.code)]).increment()
        case .handshakeRefused(let refusal):
            let status = Int(refusal.status.code)
            metrics.counter(MetricCatalog.handshakesTotal, [("status", String(status))]).increment()
            if let failure = refusal.upstreamFailure {
                metrics.counter(MetricCatalog.upstreamConnectFailuresTotal, [("reason", failure.rawValue)]).increment()
            }
            if let rule = refusal.policyRule { metrics.verdict(rule: rule, action: VerdictKind.deny.rawValue) }
        case .proxyRefused(let refusal):
            metrics.counter(MetricCatalog.proxyProtocolRefusalsTotal, [("reason", refusal.reason.label)]).increment()
        case .sessionClosed(let summary):
            closed(summary)
        case .verdict(let verdict):
            let rule = verdict.rule ?? "unnamed"
            metrics.verdict(rule: rule, action: verdict.metricAction)
            if verdict.rateLimited, !verdict.dryRun, let delay = verdict.delay {
                metrics.rateLimitDelayed(rule: rule, nanoseconds: delay.nanoseconds)
            }
        default:
            break
        }
    }

    private func track(_ id: UInt64) -> SessionTrack? { tracks.withLockedValue { $0[id] } }

    @discardableResult
    private func opened(_ info: SessionInfo) -> SessionTrack {
        let subprotocol = info.subprotocol ?? "none"
        metrics.counter(MetricCatalog.handshakesTotal, [("status", "101")]).increment()
        if let connect = info.upstreamConnectTime { metrics.upstreamConnect.recordNanoseconds(connect.nanoseconds) }
        metrics.counter(MetricCatalog.sessionsTotal, [("database", info.database), ("subprotocol", subprotocol)]).increment()
        let active = metrics.meter(MetricCatalog.sessionsActive, [("database", info.database), ("subprotocol", subprotocol)])
        active.increment()
        if let node = info.node { metrics.nodeSessionOpened(node) }
        var userMessages: [Counter]?
        var userBytes: [Counter]?
        if metrics.userLabels {
            let user = info.user ?? "anonymous"
            userMessages = MetricLabels.directions.map {
                metrics.counter(MetricCatalog.userMessagesTotal, [("user", user), ("direction", $0)])
            }
            userBytes = MetricLabels.directions.map {
                metrics.counter(MetricCatalog.userWireBytesTotal, [("user", user), ("direction", $0)])
            }
        }
        let now = Self.now()
        // The session's own analyzer (``RelayEventInterests/analysis``), shared with the log.
        let analyzer = info.analyzer ?? SessionAnalyzer(connection: Int(truncatingIfNeeded: info.id))
        let track = SessionTrack(info: info, started: now, wallClock: Date().timeIntervalSince1970, analyzer: analyzer,
                                 active: active, userMessages: userMessages, userBytes: userBytes)
        tracks.withLockedValue { $0[info.id] = track }
        return track
    }

    private func closed(_ summary: SessionSummary) {
        guard let track = tracks.withLockedValue({ $0.removeValue(forKey: summary.info.id) }) else { return }
        track.active.decrement()
        if let node = summary.info.node { metrics.nodeSessions(node).decrement() }
        updateStuck { $0.remove(summary.info.id) }
        metrics.counter(MetricCatalog.sessionsClosedTotal,
                        [("database", summary.info.database), ("close_reason", MetricLabels.closeReason(summary))]).increment()
    }

    private func observeMessage(_ event: MessageEvent, track: SessionTrack?) {
        let direction = event.direction.rawValue
        guard let type = MetricLabels.typeIndex(event.message.type) else { return }
        let now = event.time?.analyzerSeconds ?? Self.now()
        let analyzed = event.analysis
        let profileName = event.message.type == .request
            ? (analyzed?.withMessage { $0.profile } ?? event.message.profile) : event.requestProfile
        let profile = MetricLabels.profileIndex(profileName)
        metrics.messageCounter(direction: direction, type: type, profile: profile).increment()
        if let roundTrip = event.roundTrip { metrics.requestDurations[profile].recordNanoseconds(roundTrip.nanoseconds) }
        let bytes = event.message.wirePayloadBytes
        if let track {
            track.userMessages?[direction].increment()
            track.userBytes?[direction].increment(by: Int64(bytes))
            track.countMessage(wireBytes: bytes, .init(time: now, direction: event.direction, type: event.message.type,
                                     number: event.message.number, profile: profileName, bytes: bytes,
                                     latency: event.roundTrip.map { Double($0.nanoseconds) / 1e9 }))
        }
        if let analyzed {
            analyzed.withMessage { count($0.content, direction: direction, profile: profile,
                                         isExpectedError: analyzed.isExpectedError) }
            if analyzed.changesStuckReasons, let track {
                let reasons = track.analyzer.standingStuckReasons
                updateStuck { $0.update(event.sessionID, standing: reasons) }
            }
        }
    }

    /// Documents, revisions, attachments, errors and conflicts from the typed view.
    /// `isExpectedError`: an ERR that is the normal answer (a new client's getCheckpoint 404),
    /// not counted as an error reply.
    private func count(_ content: ReplicationMessage.Content, direction: Int, profile: Int, isExpectedError: Bool) {
        switch content {
        case .changes(let changes):
            metrics.documents[direction].increment(by: Int64(changes.entries.count))
        case .proposeChanges(let proposal):
            metrics.documents[direction].increment(by: Int64(proposal.entries.count))
        case .proposeChangesReply(let reply):
            let conflicts = reply.statuses.reduce(0) { $0 + ($1 == 409 ? 1 : 0) }
            if conflicts > 0 { metrics.conflicts[profile].increment(by: Int64(conflicts)) }
        case .rev(let rev):
            metrics.revisions[direction].increment()
            if rev.deleted { metrics.tombstones[direction].increment() }
        case .attachment(let bytes):
            metrics.attachmentBytes[direction].increment(by: Int64(bytes))
        case .error(let error) where !isExpectedError:
            let code = String(error.code)
            metrics.counter(MetricCatalog.errorRepliesTotal, [("profile", MetricLabels.profiles[profile]),
                                                            ("domain", error.domain), ("code", code)]).increment()
            if error.code == 409 { metrics.conflicts[profile].increment() }
        default:
            break
        }
    }

    // MARK: stuck sessions

    /// Updates the stuck-sessions gauge from every live session's ``SessionAnalyzer/stuckFindings(now:)``:
    /// per reason, the number of sessions with at least one such finding.
    /// What a capture flush wrote and dropped (the capture thread calls it).
    @Sendable func captured(_ progress: CaptureProgress) {
        metrics.captureWritten(records: progress.records, bytes: Int(progress.bytes))
        if progress.dropped > 0 { metrics.captureDropped(records: Int(progress.dropped)) }
    }

    public func pollStuck(now: Double = MetricsObserver.now()) {
        let live = tracks.withLockedValue { Array($0.values) }
        for track in live {
            let reasons = Set(track.analyzer.stuckFindings(now: now).map(\.kind))
            updateStuck { $0.update(track.info.id, timed: reasons) }
        }
    }

    /// Changes the stuck sessions and sets the gauge of each reason that changed, under one lock
    /// so that concurrent updates set the meters in the order they counted.
    private func updateStuck(_ change: (inout StuckSessions) -> Set<Finding.Kind>) {
        stuck.withLockedValue { sessions in
            for reason in change(&sessions) { metrics.stuck[reason.rawValue]?.set(sessions.count(reason)) }
        }
    }

    /// Polls stuck sessions every `interval` on `eventLoop` until ``stopPolling()``.
    public func startPolling(on eventLoop: any EventLoop, every interval: TimeAmount = .seconds(5)) {
        let task = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [self] _ in pollStuck() }
        poller.withLockedValue { $0?.cancel(); $0 = task }
    }

    public func stopPolling() { poller.withLockedValue { $0?.cancel(); $0 = nil } }

    // MARK: for the admin listener

    /// Live sessions, oldest first.
    func liveTracks() -> [SessionTrack] { tracks.withLockedValue { Array($0.values) }.sorted { $0.info.id < $1.info.id } }

    func liveTrack(_ id: UInt64) -> SessionTrack? { track(id) }
}
