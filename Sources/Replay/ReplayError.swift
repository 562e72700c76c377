/// Why a replay could not start or could not go on. One type for the module: what the capture
/// lacks, a target that refused or could not be reached, a bad option.
public struct ReplayError: Error, Sendable, CustomStringConvertible {
    enum Reason: Sendable {
        case noSession(String)
        case unreadableCapture(String)
        case refused(status: Int, body: String)
        case connection(String)
        case invalidOption(String)
    }

    let reason: Reason

    init(_ reason: Reason) { self.reason = reason }

    static func noSession(_ detail: String) -> ReplayError { ReplayError(.noSession(detail)) }
    static func unreadableCapture(_ detail: String) -> ReplayError { ReplayError(.unreadableCapture(detail)) }
    static func refused(status: Int, body: String) -> ReplayError { ReplayError(.refused(status: status, body: body)) }
    static func connection(_ detail: String) -> ReplayError { ReplayError(.connection(detail)) }
    static func invalidOption(_ detail: String) -> ReplayError { ReplayError(.invalidOption(detail)) }

    public var description: String {
        switch reason {
        case .noSession(let detail): return "no session to replay: \(detail)"
        case .unreadableCapture(let detail): return "cannot read the capture: \(detail)"
        case .refused(let status, let body):
            return "the target refused the WebSocket upgrade with HTTP \(status)" + (body.isEmpty ? "" : ": \(body)")
        case .connection(let detail): return "connection failed: \(detail)"
        case .invalidOption(let detail): return detail
        }
    }
}
