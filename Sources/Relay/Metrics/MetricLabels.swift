import BLIPCore
import BLIPNIO
import Replication

/// The fixed label values of the per-message metrics, as small integer indexes so the hot path
/// finds its counter in an array instead of hashing strings.
enum MetricLabels {
    /// `client_to_upstream` / `upstream_to_client`, indexed by `BLIPDirection.rawValue`.
    static let directions = ["client_to_upstream", "upstream_to_client"]
    /// Message types that are counted (ACKs are not messages), indexed by ``typeIndex(_:)``.
    static let types = ["request", "response", "error"]
    /// Known replication profiles, then `other`.
    static let profiles: [String] = ReplicationProfile.allCases.map(\.rawValue) + ["other"]
    static var otherProfile: Int { profiles.count - 1 }

    static func typeIndex(_ type: MessageType) -> Int? {
        switch type {
        case .request: return 0
        case .response: return 1
        case .error: return 2
        default: return nil
        }
    }

    /// The index of `profile` in ``profiles`` (`other` for unknown or missing ones).
    static func profileIndex(_ profile: String?) -> Int {
        guard let profile, let known = ReplicationProfile(rawValue: profile) else { return otherProfile }
        return known.ordinal
    }

    /// Why a session ended, as a bounded label: the relay's error code, or who closed and how.
    static func closeReason(_ summary: SessionSummary) -> String {
        if let error = summary.relayError { return error.code }
        func normal(_ close: WebSocketClose?) -> Bool { close.map { $0.code == 1000 || $0.code == 1001 } ?? false }
        if summary.clientClose?.code == 1006 || summary.upstreamClose?.code == 1006 { return "dropped" }
        if normal(summary.clientClose) { return "client_normal" }
        if normal(summary.upstreamClose) { return "upstream_normal" }
        return "error"
    }
}
