import BLIPCore

/// What a policy decided about a message beside the message's own fate, carried back with the
/// decision (``HeadDecision/asides``, ``BodyDecision/asides``) and moved by the mediator into its
/// output (``MediatorOutput/reports``, ``MediatorOutput/closeRequest``): verdicts the policy
/// carries out itself (a reply's latency, held ACKs, a close) or only reports (dry runs), and a
/// close of the whole session it asks for. Nothing calls back into the session: the shell reads
/// one output.
///
/// Bounded by one message's verdicts (a verdict per rule of the policy).
public struct VerdictAsides: Sendable {
    /// Reported in order, before what the decision itself does.
    public var reports: [MediationReport] = []
    /// The session is to end once this message's output is written.
    public var close: SessionCloseRequest?

    public init(reports: [MediationReport] = [], close: SessionCloseRequest? = nil) {
        self.reports = reports
        self.close = close
    }

    public var isEmpty: Bool { reports.isEmpty && close == nil }
}

/// A policy's `close`: end the session with this WebSocket code (1006: drop both connections
/// without a CLOSE frame) and reason.
public struct SessionCloseRequest: Sendable, Equatable {
    public var code: UInt16
    public var reason: String

    public init(code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }
}
