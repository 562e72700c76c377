import BLIPCore
import Foundation
import Replication
import WebView

/// Keeps the web view's ``SessionHistory`` of the relay's sessions (the admin listener's page):
/// per complete message one cheap ``MessageRecord`` appended to its session's ring, the session's
/// own analyzer's reading held by reference (shared with the log and metrics, never re-read),
/// nothing formatted. Viewers pull from the history; none of them can slow a session.
public final class HistoryObserver: RelayObserver, Sendable {
    public let interests: RelayEventInterests = [.sessions, .messages, .frames, .analysis]
    public let history: SessionHistory

    public init(history: SessionHistory) { self.history = history }

    /// A record keeps a preview of each message's body (``WebViewLimits/bodyPreviewBytes``), and
    /// the body's length.
    public var messageBodyPrefix: Int { history.limits.bodyPreviewBytes }

    /// The clock of the recordings: the analyzers' monotonic seconds.
    public static func now() -> Double { ReceiptTime.analyzerNow() }

    /// Events given to the observer itself (a session without its handler): found by session ID.
    public func observe(_ event: RelayEvent) {
        if case .sessionOpened(let info) = event {
            _ = record(info)
            return
        }
        let id: UInt64
        switch event {
        case .message(let message): id = message.sessionID
        case .frame(let frame): id = frame.sessionID
        case .forwarded(let session, _, _, _), .ack(let session, _, _, _): id = session
        case .sessionClosed(let summary): id = summary.info.id
        default: return
        }
        guard let recording = history.liveRecording(id) else { return }
        Self.handle(event, recording: recording, history: history)
    }

    /// The session's recording, started now; its handler holds it, so no message looks it up.
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
        guard let recording = record(info) else { return Unrecorded() }
        return Handler(recording: recording, history: history)
    }

    private func record(_ info: SessionInfo) -> SessionRecording? {
        let description = SessionDescription(
            id: info.id, clientAddress: info.clientAddress + (info.clientPort.map { ":\($0)" } ?? ""), user: info.user,
            database: info.database, upstream: info.upstream, subprotocol: info.subprotocol,
            startedWallClock: Date().timeIntervalSince1970, correlationID: info.correlationID,
            node: info.node?.label)
        return history.open(description, analyzer: info.analyzer, at: Self.now())
    }

    /// A session past ``WebViewLimits/maxLiveSessions``: not recorded (the history counts it).
    private final class Unrecorded: SessionObserver {
        func observe(_ event: RelayEvent) {}
    }

    /// One session's recording, appended to on the session's event loop: held from the first
    /// event of an input to its end (``SessionRecording/holdForBatch()``), so the messages of a
    /// read batch take one lock between them, and a viewer sees each batch whole.
    private final class Handler: SessionObserver {
        let recording: SessionRecording
        let history: SessionHistory
        private var holds = false

        init(recording: SessionRecording, history: SessionHistory) {
            self.recording = recording
            self.history = history
        }

        func observe(_ event: RelayEvent) {
            if case .sessionClosed = event {
                batchEnded()
            } else if !holds {
                holds = recording.holdForBatch()
            }
            HistoryObserver.handle(event, recording: recording, history: history)
        }

        func batchEnded() {
            guard holds else { return }
            holds = false
            recording.releaseBatch()
        }
    }

    private static func handle(_ event: RelayEvent, recording: SessionRecording, history: SessionHistory) {
        switch event {
        case .message(let message):
            let analysis = message.analysis
            let profile = message.message.type == .request
                ? (analysis?.profile ?? message.message.profile) : (analysis?.profile ?? message.requestProfile)
            recording.append(message.message, direction: message.direction,
                             time: analysis?.time ?? message.time?.analyzerSeconds ?? now(), profile: profile, analysis: analysis,
                             roundTrip: message.roundTrip.map { Double($0.nanoseconds) / 1e9 }, byRelay: message.byRelay)
        case .frame(let frame):
            // Only the frames of messages that take more than one: a message whole in one frame
            // (the common case) costs nothing here, its record describes its frame.
            guard frame.flags.hasMoreComing else { return }
            recording.frame(frame.direction, number: frame.number, flags: frame.flags, wireBytes: frame.wireBytes,
                            time: frame.time?.analyzerSeconds ?? now())
        case .forwarded(_, let direction, _, let bytes):
            recording.forwarded(direction, bytes: bytes)
        case .ack(_, let direction, let ack, let time):
            recording.ack(ack, from: direction, time: time?.analyzerSeconds ?? now())
        case .sessionClosed(let summary):
            history.close(sessionID: summary.info.id, reason: closeReason(summary), at: now())
        default:
            break
        }
    }

    /// The close in a few words: the relay's error, or each side's CLOSE.
    static func closeReason(_ summary: SessionSummary) -> String {
        if let error = summary.relayError { return "relay ended it: \(error)" }
        var parts: [String] = []
        if let close = summary.clientClose { parts.append("client \(close.code)\(close.reason.isEmpty ? "" : " \(close.reason)")") }
        if let close = summary.upstreamClose { parts.append("upstream \(close.code)\(close.reason.isEmpty ? "" : " \(close.reason)")") }
        return parts.isEmpty ? "closed" : parts.joined(separator: ", ")
    }
}
