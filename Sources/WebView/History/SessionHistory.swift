import BLIPCore
import NIOConcurrencyHelpers
import Replication
import SyncGatewayLog

/// What the web view knows: the live sessions and the most recently closed ones, each a
/// ``SessionRecording``. The relay (or `blipscope web`, from files) writes; viewers read. Bounded
/// by ``WebViewLimits``: at most ``WebViewLimits/maxLiveSessions`` live sessions are recorded and
/// ``WebViewLimits/maxClosedSessions`` closed ones kept.
///
/// Writing a message costs one locked dictionary lookup here and one append under the
/// session's own lock; nothing is formatted until a viewer asks.
public final class SessionHistory: Sendable {
    public let limits: WebViewLimits
    /// Whether sessions keep Sync Gateway's log lines (``addSyncGatewayLines(_:)``): `--sg-log`.
    public let joinsSyncGatewayLog: Bool
    private let state = NIOLockedValueBox(State())

    struct State {
        var live: [UInt64: SessionRecording] = [:]
        /// Closed sessions, oldest first.
        var closed: [SessionRecording] = []
        var notRecorded = 0
        /// Bumped when a session opens or closes.
        var generation = 0
        /// Kept sessions (live and closed) by their Sync Gateway correlation ID, when joining SG's log.
        var byCorrelationID: [String: SessionRecording] = [:]
    }

    public init(limits: WebViewLimits = .default, joinsSyncGatewayLog: Bool = false) {
        self.limits = limits
        self.joinsSyncGatewayLog = joinsSyncGatewayLog
    }

    // MARK: writing

    /// Starts recording a session; returns nil (and counts it) when ``WebViewLimits/maxLiveSessions``
    /// are already recorded.
    @discardableResult
    public func open(_ description: SessionDescription, analyzer: SessionAnalyzer?, at time: Double) -> SessionRecording? {
        let recording = SessionRecording(description: description, analyzer: analyzer, started: time, limits: limits,
                                         joinsSyncGatewayLog: joinsSyncGatewayLog)
        return state.withLockedValue { state in
            guard state.live.count < limits.maxLiveSessions else {
                state.notRecorded += 1
                return nil
            }
            state.live[description.id] = recording
            if joinsSyncGatewayLog, let id = description.correlationID { state.byCorrelationID[id] = recording }
            state.generation += 1
            return recording
        }
    }

    /// Records a complete message of a live session (ignored for an unrecorded one).
    public func append(sessionID: UInt64, _ message: BLIPMessage, direction: BLIPDirection, time: Double,
                       profile: String?, analysis: AnalyzedMessage?, roundTrip: Double?, byRelay: Bool = false) {
        guard let recording = live(sessionID) else { return }
        recording.append(message, direction: direction, time: time, profile: profile, analysis: analysis,
                         roundTrip: roundTrip, byRelay: byRelay)
    }

    /// An ACK sent `from` one side for a message of the other; `time` on the session's clock.
    public func ack(sessionID: UInt64, _ ack: AckInfo, from direction: BLIPDirection, time: Double = .nan) {
        live(sessionID)?.ack(ack, from: direction, time: time)
    }

    /// A frame with MoreComing set (of a message that takes more than one frame): kept, as
    /// numbers, with the message when it completes. Frames without MoreComing need no call.
    public func frame(sessionID: UInt64, direction: BLIPDirection, number: MessageNumber, flags: FrameFlags,
                      wireBytes: Int, time: Double) {
        live(sessionID)?.frame(direction, number: number, flags: flags, wireBytes: wireBytes, time: time)
    }

    /// Bytes a session forwarded without decoding them (no message records): counted in its
    /// bytes each way as messages' are.
    public func forwarded(sessionID: UInt64, direction: BLIPDirection, bytes: Int) {
        live(sessionID)?.forwarded(direction, bytes: bytes)
    }

    /// Moves a session to the closed ones, forgetting the oldest closed session beyond the limit.
    public func close(sessionID: UInt64, reason: String, at time: Double) {
        guard let recording = state.withLockedValue({ $0.live.removeValue(forKey: sessionID) }) else { return }
        recording.close(reason: reason, at: time)
        state.withLockedValue { state in
            state.closed.append(recording)
            if state.closed.count > limits.maxClosedSessions {
                let forgotten = state.closed.prefix(state.closed.count - limits.maxClosedSessions)
                for old in forgotten {
                    if let id = old.description.correlationID, state.byCorrelationID[id] === old { state.byCorrelationID[id] = nil }
                }
                state.closed.removeFirst(forgotten.count)
            }
            state.generation += 1
        }
    }

    /// Sync Gateway's log lines, each to the kept session (live or closed: SG logs a connection's
    /// end after it) whose correlation ID it names, in the order given. Returns how many named
    /// no kept session (other replications of the gateway, or sessions already forgotten).
    @discardableResult
    public func addSyncGatewayLines(_ lines: [SyncGatewayLogLine]) -> Int {
        guard joinsSyncGatewayLog else { return lines.count }
        var byID: [Substring: [SyncGatewayLogLine]] = [:]
        for line in lines { if let id = line.correlationID { byID[id, default: []].append(line) } }
        var unmatched = lines.count
        for (id, lines) in byID {
            guard let recording = state.withLockedValue({ $0.byCorrelationID[String(id)] }) else { continue }
            recording.addSyncGatewayLines(lines)
            unmatched -= lines.count
        }
        return unmatched
    }

    /// The correlation IDs of the kept sessions (what a log read from files is filtered by).
    public var correlationIDs: Set<String> { state.withLockedValue { Set($0.byCorrelationID.keys) } }

    // MARK: reading

    private func live(_ id: UInt64) -> SessionRecording? { state.withLockedValue { $0.live[id] } }

    /// The recording of live session `id`, if it is recorded.
    public func liveRecording(_ id: UInt64) -> SessionRecording? { live(id) }

    /// A live or kept closed session.
    public func recording(_ id: UInt64) -> SessionRecording? {
        state.withLockedValue { state in state.live[id] ?? state.closed.last { $0.description.id == id } }
    }

    /// Every session kept, live and closed, in the order they opened.
    public func recordings() -> [SessionRecording] {
        state.withLockedValue { state in (state.closed + state.live.values) }.sorted { $0.description.id < $1.description.id }
    }

    /// Sessions opened while ``WebViewLimits/maxLiveSessions`` were recorded.
    public var notRecorded: Int { state.withLockedValue { $0.notRecorded } }

    /// Changes whenever a session opens or closes or any kept session records a message: what
    /// the sessions feed compares to decide whether to send.
    public func changeStamp() -> ChangeStamp {
        let (generation, sessions) = state.withLockedValue { ($0.generation, Array($0.live.values)) }
        return ChangeStamp(generation: generation, messages: sessions.reduce(0) { $0 &+ $1.snapshot().total })
    }

    /// Sessions opened or closed (``generation``) and messages the live ones recorded: two numbers
    /// compared as a pair, so no count of messages can cancel a session's closing.
    public struct ChangeStamp: Equatable, Sendable {
        public let generation: Int
        public let messages: Int
    }
}
