import BLIPCore
import NIOCore
import Replication

/// One subChanges subscription on the passive side (replication-protocol §3 "subChanges",
/// §5 "Pull" steps 4–7, 11, 13): sends changes in batches while at most
/// ``GatewayLimits/maxUnansweredChanges`` are unanswered, answers each reply with rev (or norev
/// for a revision no longer held), sends the "caught up" changes once everything before it was
/// answered, and in continuous mode keeps going as the database changes.
///
/// As Sync Gateway does (docs/sync-gateway-behaviour.md): the caught-up changes has the body
/// `null` and is NoReply; a rev is NoReply unless it has attachments, whose fetching
/// ``AttachmentAllowances`` allows until the rev's reply comes back.
///
/// `@unchecked Sendable` because the database observer captures it: every method runs on
/// `eventLoop` (the observer hops there first).
final class ChangesFeed: @unchecked Sendable {
    struct Subscription {
        var since: UInt64
        var continuous: Bool
        var batch: Int
        var filter: ChangesFilter
        /// A version-vector pull (`versioning=version-vectors` on CBMobile_4): entries and revs
        /// name revisions by their versions where they have them (replication-protocol §4).
        var versions = false
    }

    private let database: GatewayDatabase
    private let collection: CollectionPath
    private let collectionIndex: Int?
    private let peer: BLIPPeer
    private let eventLoop: EventLoop
    private let limits: GatewayLimits
    private let allowances: AttachmentAllowances
    private let subscription: Subscription
    private var cursor: UInt64
    private var unanswered = 0
    private var sentCaughtUp = false
    private var stopped = false
    private var observer: UInt64?

    init(database: GatewayDatabase, collection: CollectionPath, collectionIndex: Int?, peer: BLIPPeer,
         eventLoop: EventLoop, limits: GatewayLimits, allowances: AttachmentAllowances, subscription: Subscription) {
        self.allowances = allowances
        self.database = database
        self.collection = collection
        self.collectionIndex = collectionIndex
        self.peer = peer
        self.eventLoop = eventLoop
        self.limits = limits
        self.subscription = subscription
        self.cursor = subscription.since
    }

    func start() {
        if subscription.continuous {
            let loop = eventLoop
            observer = database.addObserver { [weak self] in
                guard let feed = self else { return }
                loop.execute { feed.pump() }
            }
        }
        pump()
    }

    /// unsubChanges or connection closed: stop sending (Connected Client §3.5).
    func stop() {
        stopped = true
        if let observer { database.removeObserver(observer) }
        observer = nil
    }

    private func pump() {
        while !stopped, unanswered < limits.maxUnansweredChanges {
            let (entries, through) = database.changes(in: collection, since: cursor, limit: subscription.batch,
                                                      filter: subscription.filter)
            cursor = through
            if entries.isEmpty {
                if !sentCaughtUp, unanswered == 0 {
                    sentCaughtUp = true
                    _ = peer.sendRequest(changesRequest(Self.caughtUpBody, noReply: true))
                    if !subscription.continuous { stop() }
                }
                return
            }
            send(entries)
        }
    }

    /// Sync Gateway's caught-up batch: `null`, not `[]`.
    static let caughtUpBody = ByteBuffer(string: "null")

    private func changesRequest(_ body: ByteBuffer, noReply: Bool = false) -> BLIPMessage {
        var properties: Properties = [:]
        if let collectionIndex { properties[.collection] = String(collectionIndex) }
        return .request(profile: ReplicationProfile.changes.rawValue, properties: properties, body: body,
                        compressed: body.readableBytes > 256, noReply: noReply)
    }

    private func send(_ entries: [ChangeEntry]) {
        unanswered += 1
        peer.sendRequest(changesRequest(RevisionSender.changesBody(entries, versions: subscription.versions))).whenComplete { [self] result in
            unanswered -= 1
            if case .success(let reply) = result, reply.type != .error {
                sendWanted(entries, reply: reply)
            }
            pump()
        }
    }

    /// Sends rev (or norev) for each entry the reply asks for, with history cut at the known
    /// ancestors and `maxHistory`.
    private func sendWanted(_ entries: [ChangeEntry], reply: BLIPMessage) {
        guard !stopped, let answers = (try? JSONValue.parse(reply.body, what: "changes reply"))?.arrayValue else { return }
        let maxHistory = reply.properties[.maxHistory].flatMap { Int($0) } ?? limits.maxRevTreeDepth
        for (entry, answer) in zip(entries, answers) {
            guard let ancestors = answer.arrayValue else { continue }
            let known = ancestors.compactMap(\.stringValue)
            if let revision = database.outgoingRevision(docID: entry.docID, revID: entry.revID, in: collection,
                                                        knownAncestors: known, maxHistory: maxHistory) {
                var outgoing = revision
                outgoing.sequence = entry.sequence
                sendRev(outgoing, docID: entry.docID)
            } else {
                let named = subscription.versions ? entry.version ?? entry.revID : entry.revID
                _ = peer.sendRequest(RevisionSender.noRevMessage(docID: entry.docID, revID: named,
                                                                 sequence: entry.sequence, collectionIndex: collectionIndex))
            }
        }
    }

    /// Sends one rev: NoReply when it has no attachments; otherwise awaiting the reply, with its
    /// attachments allowed to the client until that reply (or the send's failure).
    private func sendRev(_ revision: OutgoingRevision, docID: String) {
        let attachments = Self.attachments(of: revision.body)
        let message = RevisionSender.revMessage(docID: docID, revision, collectionIndex: collectionIndex,
                                                versions: subscription.versions, noReply: attachments.isEmpty)
        guard !attachments.isEmpty else {
            _ = peer.sendRequest(message)
            return
        }
        let allowed = allowances.allow(attachments, of: docID)
        peer.sendRequest(message).whenComplete { [allowances] _ in allowances.withdraw(allowed) }
    }

    /// The attachments (`_attachments` and blobs) a revision's body names.
    static func attachments(of body: ByteBuffer) -> [AttachmentReference] {
        guard RevMessage.mentionsAttachments(body) || RevMessage.mentionsBlobs(body) else { return [] }
        let typed = ReplicationMessage(.request(profile: ReplicationProfile.rev.rawValue, properties: Properties([.id: "-", .rev: "1-a"]), body: body),
                                       context: MessageContext())
        if case .rev(let rev) = typed.content { return rev.attachments }
        return []
    }
}
