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
    public static func now() -> Double { SessionInspector.analyzerNow() }

    public func observe(_ event: RelayEvent) {
        switch event {
        case .message(let message):
            let analysis = message.analysis
            let profile = message.message.type == .request
                ? (analysis?.profile ?? message.message.profile) : (analysis?.profile ?? message.requestProfile)
            history.append(sessionID: message.sessionID, message.message, direction: message.direction,
                           time: analysis?.time ?? message.time?.analyzerSeconds ?? Self.now(), profile: profile, analysis: analysis,
                           roundTrip: message.roundTrip.map { Double($0.nanoseconds) / 1e9 }, byRelay: message.byRelay)
        case .frame(let frame):
            // Only the frames of messages that take more than one: a message whole in one frame
            // (the common case) costs nothing here, its record describes its frame.
            guard frame.flags.hasMoreComing else { return }
            history.frame(sessionID: frame.sessionID, direction: frame.direction, number: frame.number, flags: frame.flags,
                          wireBytes: frame.wireBytes, time: frame.time?.analyzerSeconds ?? Self.now())
        case .forwarded(let sessionID, let direction, _, let bytes):
            history.forwarded(sessionID: sessionID, direction: direction, bytes: bytes)
        case .ack(let sessionID, let direction, let ack, let time):
            history.ack(sessionID: sessionID, ack, from: direction, time: time?.analyzerSeconds ?? Self.now())
        case .sessionOpened(let info):
            let description = SessionDescription(
                id: info.id, clientAddress: info.clientAddress + (info.clientPort.map { ":\($0)" } ?? ""), user: info.user,
                database: info.database, upstream: info.upstream, subprotocol: info.subprotocol,
                startedWallClock: Date().timeIntervalSince1970, correlationID: info.correlationID)
            history.open(description, analyzer: info.analyzer, at: Self.now())
        case .sessionClosed(let summary):
            history.close(sessionID: summary.info.id, reason: Self.closeReason(summary), at: Self.now())
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
