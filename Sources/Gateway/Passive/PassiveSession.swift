import BLIPCore
import Logging
import NIOCore
import Replication

/// The passive peer's side of one connection (the role Sync Gateway plays): answers every
/// request of the replication protocol and Connected Client from one ``GatewayDatabase``.
/// On CBMobile_4 it also takes and serves version vectors (replication-protocol §4), deciding
/// by the shape of each revision ID, so rev-tree documents keep replicating there too.
///
/// Requests are typed with the Replication module's views; a malformed one gets the ERR reply
/// Sync Gateway would send (`HTTP` domain, 400/404/409…, wire-format reference §6) and the
/// connection carries on. `@unchecked Sendable` so the server can keep it in a registry:
/// it is only ever used on its connection's event loop.
final class PassiveSession: @unchecked Sendable {
    let database: GatewayDatabase
    let peer: BLIPPeer
    let eventLoop: EventLoop
    let limits: GatewayLimits
    /// Conflict-free mode: `changes` is refused with 409 and every rev is checked as noconflicts.
    let conflictFree: Bool
    let user: String?
    let logger: Logger
    /// N of the negotiated `BLIP_3+CBMobile_N`: 4 admits version-vector pulls (§4).
    let protocolVersion: Int
    var mode = CollectionMode.undecided
    var feeds: [Int: ChangesFeed] = [:]
    /// What the client may fetch with getAttachment now (revs sent awaiting its reply).
    let allowances: AttachmentAllowances
    /// Sync Gateway's kind of log line per handled request, when configured.
    var log: SyncGatewayStyleLog?

    init(database: GatewayDatabase, peer: BLIPPeer, eventLoop: EventLoop, limits: GatewayLimits,
         conflictFree: Bool, user: String?, logger: Logger, protocolVersion: Int = 3, log: SyncGatewayStyleLog? = nil) {
        self.log = log
        self.protocolVersion = protocolVersion
        self.database = database
        self.peer = peer
        self.eventLoop = eventLoop
        self.limits = limits
        self.conflictFree = conflictFree
        self.user = user
        self.logger = logger
        allowances = AttachmentAllowances(protocolVersion: protocolVersion, limit: limits.maxAllowedAttachments)
    }

    /// Answers one request. Never throws: every failure becomes an ERR reply.
    func handle(_ request: BLIPMessage) {
        guard let profile = request.profile.flatMap(ReplicationProfile.init(rawValue:)) else {
            peer.answer(request, with: GatewayError.noHandler(for: request))
            return
        }
        log?.handled(request, profile: profile)
        do {
            try dispatch(request, profile: profile)
        } catch {
            logger.debug("\(profile.rawValue) #\(request.number) refused: \(error)")
            log?.refused(request, profile: profile, error: error)
            peer.answer(request, error: error)
        }
    }

    /// Stops every subscription (the connection closed).
    func close() {
        for feed in feeds.values { feed.stop() }
        feeds.removeAll()
    }

    private var context: MessageContext {
        if case .aware(let paths) = mode {
            return MessageContext(versioning: protocolVersion >= 4 ? nil : .revTrees, collections: paths.map { $0 ?? GatewayDatabase.defaultCollection },
                                  maxJSONBodyBytes: limits.maxDocumentSize)
        }
        return MessageContext(maxJSONBodyBytes: limits.maxDocumentSize)
    }

    private func dispatch(_ request: BLIPMessage, profile: ReplicationProfile) throws(GatewayError) {
        let typed = ReplicationMessage(request, context: context)
        let collection = try mode.resolve(profile, index: typed.collection)
        if let violation = typed.violations.first { throw .badRequest(violation.description) }
        let index = typed.collection
        switch typed.content {
        case .getCollections(let get): try getCollections(request, get)
        case .getCheckpoint(let get): try getCheckpoint(request, get, collection: collection)
        case .setCheckpoint(let set): try setCheckpoint(request, set, collection: collection)
        case .subChanges(let sub): try subChanges(request, sub, collection: collection, index: index)
        case .unsubChanges:
            close()
            peer.answer(request)
        case .changes(let batch): try receiveChanges(request, batch, collection: collection)
        case .proposeChanges(let propose): proposeChanges(request, propose, collection: collection)
        case .rev(let rev): try receiveRev(request, rev, collection: collection, index: index)
        case .norev: peer.answer(request)
        case .getAttachment(let get):
            guard allowances.allows(docID: get.docID, digest: get.digest) else { throw AttachmentAllowances.refusal }
            peer.answer(request, with: try PeerResponses.attachmentReply(to: request, get, database: database))
        case .proveAttachment(let prove):
            peer.answer(request, with: try PeerResponses.proofReply(to: request, prove, database: database))
        case .getRev(let get): try getRev(request, get)
        case .ping: peer.answer(request)
        default: peer.answer(request, with: GatewayError.noHandler(for: request))
        }
    }
}
