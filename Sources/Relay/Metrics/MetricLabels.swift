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
        switch known {
        case .getCheckpoint: return 0
        case .setCheckpoint: return 1
        case .getCollections: return 2
        case .subChanges: return 3
        case .unsubChanges: return 4
        case .changes: return 5
        case .proposeChanges: return 6
        case .rev: return 7
        case .norev: return 8
        case .getAttachment: return 9
        case .proveAttachment: return 10
        case .getRev: return 11
        case .putRev: return 12
        case .ping: return 13
        }
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

    /// Upstream dial failures by cause, from the handshake status the client got.
    static func upstreamFailure(status: Int) -> String? {
        switch status {
        case 502: return "unreachable"
        case 504: return "timeout"
        default: return nil
        }
    }
}
