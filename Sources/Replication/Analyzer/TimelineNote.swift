import BLIPCore
/// Why a timeline event happened, kept as data and turned into text only when someone reads
/// the timeline (``TimelineEvent/note``), so the analyzer's hot path formats no strings. The
/// rare, larger cases are `indirect` to keep every stored event small.
enum TimelineNote: Sendable {
    /// Text taken as is (a digest, a server revision ID).
    case text(String)
    /// A norev's status and reason.
    indirect case norev(error: Int?, reason: String?)
    /// A changes entry wanted with this many known ancestors.
    case knowsAncestors(Int)
    /// A changes entry answered 0 or null.
    case alreadyKnownOrFiltered
    /// A changes entry flagged revoked (2: the receiver's user lost access to the document) or
    /// removed (4: the document left the user's channels), as Sync Gateway sends them to a
    /// client that asked with `revocations=true`; LiteCore then purges the document.
    case revokedOrRemoved(revoked: Bool, removed: Bool)
    /// A whole changes message answered with an ERR.
    indirect case changesRefused(ErrorReply)
    /// A proposeChanges entry answered 304.
    case peerHasIt
    /// A proposeChanges entry refused: its status, or -1 with the ERR that refused them all;
    /// the peer's current revision when its answer named it (`{"status":409,"rev":…}`).
    indirect case proposalRefused(status: Int, error: ErrorReply?, serverRevID: String?)
    /// A rev (or getRev) answered with an ERR; `detailed` adds the start of its message.
    indirect case error(ErrorReply, detailed: Bool)

    var text: String {
        switch self {
        case .text(let text):
            return text
        case .norev(let error, let reason):
            return [error.map(String.init), reason].compactMap { $0 }.joined(separator: " ")
        case .knowsAncestors(let count):
            return "knows \(count) ancestor(s)"
        case .alreadyKnownOrFiltered:
            return "already known or filtered"
        case .revokedOrRemoved(let revoked, let removed):
            return [revoked ? "revoked: the user lost access to it" : nil, removed ? "removed from the user's channels" : nil]
                .compactMap { $0 }.joined(separator: "; ")
        case .changesRefused(let error):
            return "changes refused with \(error.key)" + (error.code == 409 ? " (peer is conflict-free: proposeChanges expected)" : "")
        case .peerHasIt:
            return "304: the peer already has it"
        case .proposalRefused(let status, let error, let serverRevID):
            if status == 409 {
                return "409: conflict, resolve and retry" + (serverRevID.map { " (peer has \(RevID.abbreviate($0)))" } ?? "")
            }
            if status == -1, let error { return "proposeChanges refused with \(error.key)" }
            return "status \(status)"
        case .error(let error, let detailed):
            guard detailed else { return error.key }
            return error.key + (error.message.isEmpty ? "" : " \(error.message.prefix(80))")
        }
    }
}
