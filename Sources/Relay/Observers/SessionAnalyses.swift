import BLIPCore
import NIOConcurrencyHelpers
import NIOCore
import Replication

/// One replication ``SessionAnalyzer`` per live relay session, so the log can read each message
/// in protocol terms (`changes 12 revs seq 100…112 → wants 10`) and close each session with its
/// replication summary. Sessions are added at open and removed at close: memory is bounded by the
/// live sessions and the analyzer's own limits.
final class SessionAnalyses: Sendable {
    private let analyzers = NIOLockedValueBox<[UInt64: SessionAnalyzer]>([:])
    private let limits: AnalyzerLimits

    init(limits: AnalyzerLimits = .default) { self.limits = limits }

    func open(_ info: SessionInfo, at time: Double) {
        let analyzer = SessionAnalyzer(connection: Int(truncatingIfNeeded: info.id), limits: limits)
        analyzer.observeHandshake(subprotocol: info.subprotocol, user: info.user, at: time)
        analyzers.withLockedValue { $0[info.id] = analyzer }
    }

    /// The message's one-line summary, or nil for a session the analyzer does not know.
    func summary(of event: MessageEvent, at time: Double) -> String? {
        guard let analyzer = analyzers.withLockedValue({ $0[event.sessionID] }) else { return nil }
        return analyzer.observe(message: event.message, from: event.direction, at: time).summary
    }

    /// Ends a session: its replication summary, or nil if it was never opened here.
    func close(_ summary: SessionSummary, at time: Double) -> ReplicationSummary? {
        guard let analyzer = analyzers.withLockedValue({ $0.removeValue(forKey: summary.info.id) }) else { return nil }
        for (side, close) in [(BLIPDirection.clientToServer, summary.clientClose), (.serverToClient, summary.upstreamClose)] {
            if let close { analyzer.observeClose(from: side, code: Int(close.code), reason: close.reason, at: time) }
        }
        return analyzer.summary()
    }
}
