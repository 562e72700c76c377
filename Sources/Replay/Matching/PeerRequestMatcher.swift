import BLIPCore
import NIOCore
import ReplicationNames

/// Finds, for a request the live peer sends, the recorded peer request it stands for, and so
/// the reply to give it. Pure; one per replayed connection.
///
/// Candidates are the recorded requests of the same profile not used yet. The best scores
/// highest: key properties equal (per profile: `client` for checkpoints, `id`/`rev` for
/// revisions, `digest` for attachments, `collection` everywhere) count 2, an equal body 1; ties
/// go to the earliest, so a batch that differs in content still pairs with the batch at the same
/// position. When all recorded requests of that profile are used up, the last one's reply is
/// given again and the match is flagged as reused; a profile never recorded has no match.
public struct PeerRequestMatcher: Sendable {
    public struct Match: Sendable {
        public var recorded: RecordedPeerRequest
        /// Key properties and body equal.
        public var exact: Bool
        /// All recorded requests of the profile were used already; this one's reply is reused.
        public var reused: Bool
    }

    /// The properties that identify a request of each profile.
    public static let keyProperties: [String: [String]] = {
        let typed: [ReplicationProfile: [PropertyName]] = [
            .getCheckpoint: [.client, .collection],
            .setCheckpoint: [.client, .collection],
            .subChanges: [.collection, .continuous, .filter, .channels],
            .changes: [.collection],
            .proposeChanges: [.collection],
            .rev: [.id, .rev, .collection],
            .norev: [.id, .rev, .collection],
            .getAttachment: [.digest, .docID],
            .proveAttachment: [.digest],
            .getRev: [.id, .rev, .collection],
            .putRev: [.id, .rev, .collection],
        ]
        return Dictionary(uniqueKeysWithValues: typed.map { ($0.key.rawValue, $0.value.map(\.rawValue)) })
    }()

    private let recorded: [String: [RecordedPeerRequest]]
    private var used: [String: Set<Int>] = [:]

    public init(peerRequests: [RecordedPeerRequest]) {
        recorded = Dictionary(grouping: peerRequests, by: \.profile)
    }

    /// The recorded request `request` is taken to be, marked used; nil when its profile was never recorded.
    public mutating func match(_ request: BLIPMessage) -> Match? {
        let profile = request.profile ?? "(no profile)"
        guard let candidates = recorded[profile], let last = candidates.last else { return nil }
        let keys = Self.keyProperties[profile] ?? []
        var best: (candidate: RecordedPeerRequest, score: Int)?
        for candidate in candidates where !used[profile, default: []].contains(candidate.index) {
            let keysEqual = keys.allSatisfy { candidate.request.properties[$0] == request.properties[$0] }
            let score = (keysEqual ? 2 : 0) + (candidate.request.body == request.body ? 1 : 0)
            if score > (best?.score ?? -1) { best = (candidate, score) }
            if score == 3 { break }
        }
        guard let best else { return Match(recorded: last, exact: false, reused: true) }
        used[profile, default: []].insert(best.candidate.index)
        return Match(recorded: best.candidate, exact: best.score == 3, reused: false)
    }

    /// The reply to send for `request` from the recorded `reply`: same type, flags (but
    /// MoreComing), properties and body, numbered as `request` (§4.4).
    public static func reply(_ reply: BLIPMessage, answering request: BLIPMessage) -> BLIPMessage {
        var flags = reply.flags
        flags.hasMoreComing = false
        return BLIPMessage(type: reply.type, number: request.number, flags: flags,
                           properties: reply.properties, body: reply.body)
    }
}
