import BLIPCore
import Foundation
import BatchLock

/// Follows one replication session from both directions: pairs requests with replies and
/// measures latency, keeps per-document timelines, checkpoint history, the session summary and
/// protocol-violation findings, and says why a session is stuck (replication-protocol §3, §5).
///
/// The relay and `blipscope inspect` feed it the same events; time is passed in (seconds on any
/// monotonic scale), never read from a clock. Thread-safe (one lock), though one session's
/// events should come in order. Memory is bounded by ``AnalyzerLimits``.
///
/// The thread that feeds it (the relay session's event loop) can ``hold()`` it for a whole
/// batch of events — one read or timer of the session, however many messages it carries: its
/// calls meanwhile take no lock (a message costs one atomic load, not a lock), and a reader on
/// another thread (the admin listener, a web viewer, a scrape) waits until it lets go. Calls
/// from the holding thread itself, while it holds it, are served at once (it is re-entrant for
/// its holder), so an observer may read it as it is being fed.
///
/// Lock order: nothing calls into an analyzer while holding a lock that its feeding thread may
/// take while it holds the analyzer (the relay's readers copy what they need out of their own
/// tables first).
public final class SessionAnalyzer: @unchecked Sendable {
    public let connection: Int
    public let limits: AnalyzerLimits
    private let registry: CheckpointRegistry?
    private let state: BatchLocked<SessionState>

    /// - Parameters:
    ///   - connection: the session's number, reported as `conn` in every result.
    ///   - registry: shared by all sessions of a relay to spot two live sessions using one
    ///     checkpoint client ID; nil to skip that check.
    public init(connection: Int = 0, limits: AnalyzerLimits = .default, registry: CheckpointRegistry? = nil) {
        self.connection = connection
        self.limits = limits
        self.registry = registry
        self.state = BatchLocked(SessionState(connection: connection, limits: limits, registry: registry))
    }

    deinit { registry?.release(session: connection) }

    /// The WebSocket handshake: the negotiated sub-protocol and the authenticated user, if known.
    public func observeHandshake(subprotocol: String?, user: String?, at time: Double) {
        withState { $0.observeHandshake(subprotocol: subprotocol, user: user, at: time) }
    }

    /// A complete message travelling `from` one side. Replies are paired with the request of the
    /// same number that went the other way.
    @discardableResult
    public func observe(message: BLIPMessage, from direction: BLIPDirection, at time: Double) -> AnalyzedMessage {
        withState { $0.observe(message: message, from: direction, at: time) }
    }

    /// A request the relay kept from its receiver and answered itself (a mediation policy denied
    /// it): paired with that answer, which ``observe(message:from:at:)`` then reads as coming
    /// from the receiver's side (it is what the sender got), but nothing of it counts as
    /// delivered: a withheld `rev` is counted in ``TransferCounts/revisionsWithheld``, not sent.
    @discardableResult
    public func observe(withheld message: BLIPMessage, from direction: BLIPDirection, at time: Double) -> AnalyzedMessage {
        withState { $0.observe(message: message, from: direction, at: time, withheld: true) }
    }

    /// An ACK sent `from` one side for a message of the other (BLIP §5); ends a pause.
    public func observeAck(_ ack: AckInfo, from direction: BLIPDirection, at time: Double) {
        withState { $0.observeAck(ack, from: direction, at: time) }
    }

    /// `direction`'s sender stopped sending message `number` waiting for ACKs (flow control).
    public func observePaused(_ direction: BLIPDirection, type: MessageType, number: MessageNumber, at time: Double) {
        withState { $0.observePaused(direction, type: type, number: number, at: time) }
    }

    /// The paused message resumed (without an ACK having been observed).
    public func observeResumed(_ direction: BLIPDirection, type: MessageType, number: MessageNumber, at time: Double) {
        withState { $0.observeResumed(direction, type: type, number: number) }
    }

    /// A side sent a WebSocket CLOSE (`from` nil when the connection dropped without one).
    public func observeClose(from direction: BLIPDirection?, code: Int?, reason: String, at time: Double) {
        withState { $0.observeClose(from: direction, code: code, reason: reason, at: time) }
        registry?.release(session: connection)
    }

    /// The timeline of `docID` across both directions, oldest first (may have been evicted).
    public func timeline(docID: String) -> [TimelineEvent] {
        withState { $0.timelines.events(for: docID, connection: connection, collections: $0.context.collections) }
    }

    /// Documents that currently have a timeline.
    public var timelineDocumentIDs: [String] { withState { $0.timelines.documentIDs.sorted() } }

    /// Why the session looks stuck at `now`: the timed rules (requests, revs and pauses past
    /// their timeouts, a one-shot pull without caught-up) and the standing findings that hold.
    /// Pass `.infinity` at the end of a capture to report everything still outstanding. This is
    /// what the relay's stuck gauge counts.
    public func stuckFindings(now: Double) -> [Finding] { withState { $0.stuckFindings(now: now) } }

    /// Every finding once, in time order: those raised so far (``findings``) and the timed rules
    /// at `now`. What `inspect --stuck` and the admin listener's `/sessions` show.
    public func allFindings(now: Double) -> [Finding] { withState { $0.allFindings(now: now) } }

    /// Findings raised so far, in order, each once: protocol violations, and standing findings
    /// (``Finding/Kind/isStanding``) with their running count, kept current.
    public var findings: [Finding] { withState { $0.findings } }

    /// The kinds of the standing findings that hold now; cheap (no clock, no scan of the
    /// session's tables). ``AnalyzedMessage/changesStuckReasons`` says when it changed.
    public var standingStuckReasons: Set<Finding.Kind> { withState { $0.standingStuckReasons } }

    /// Every getCheckpoint/setCheckpoint exchange, in order.
    public var checkpointHistory: [CheckpointEvent] {
        withState { state in state.checkpoints.values.flatMap(\.events).sorted { $0.time < $1.time } }
    }

    /// Counts so far (complete once the session has closed).
    public func summary() -> ReplicationSummary { withState { $0.summary() } }

    /// Runs `batch` holding the analyzer: this thread's calls in it take no lock, other threads'
    /// wait until it returns. Nested holds on the holding thread just run.
    public func holding<T>(_ batch: () -> T) -> T { state.holding(batch) }

    /// Takes the analyzer for this thread until ``release()`` (a batch whose end is known only
    /// later): as ``holding(_:)``. The holder must not hold it again before releasing it.
    public func hold() { state.hold() }

    /// Ends this thread's ``hold()``.
    public func release() { state.release() }

    private func withState<T>(_ body: (inout SessionState) -> T) -> T { state.withLockedValue(body) }
}
