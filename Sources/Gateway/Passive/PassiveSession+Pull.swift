import BLIPCore
import NIOCore
import Replication

extension PassiveSession {
    /// subChanges (replication-protocol §3; Connected Client §3.4): replies at once, then starts a
    /// ``ChangesFeed`` for the collection, replacing any earlier one. `version-vectors` needs
    /// CBMobile_4 (a feed that names versions, §4); only the `sync_gateway/bychannel` filter is
    /// supported; other requests get an error (and, for versioning, the connection closes, as §3
    /// requires).
    func subChanges(_ request: BLIPMessage, _ sub: SubChangesRequest, collection: CollectionPath,
                    index: Int?) throws(GatewayError) {
        if sub.versioning == .versionVectors, protocolVersion < 4 {
            peer.answer(request, error: .badRequest("version-vectors versioning needs BLIP_3+CBMobile_4"))
            peer.close(code: 1000, reason: "unsupported versioning")
            return
        }
        var filter = ChangesFilter(activeOnly: sub.activeOnly)
        if let name = sub.filter {
            guard name == "sync_gateway/bychannel" else { throw .badRequest("unknown filter \(name)") }
            guard let channels = sub.channels, !channels.isEmpty else {
                throw .badRequest("sync_gateway/bychannel needs a channels parameter")
            }
            filter.channels = Set(channels)
        }
        if let docIDs = sub.docIDs { filter.docIDs = Set(docIDs) }
        let since: UInt64
        switch sub.since {
        case nil: since = 0
        case .now: since = database.lastSequence
        case .sequence(let value):
            guard let number = value.sequenceNumber else { throw .badRequest("invalid since sequence \(value)") }
            since = number
        }
        let batch = min(sub.batch ?? limits.changesBatchSize, limits.maxChangesBatchSize)
        let key = index ?? 0
        feeds.removeValue(forKey: key)?.stop()
        let feed = ChangesFeed(database: database, collection: collection, collectionIndex: index, peer: peer,
                               eventLoop: eventLoop, limits: limits, allowances: allowances,
                               subscription: .init(since: since, continuous: sub.continuous, batch: max(batch, 1),
                                                   filter: filter, versions: sub.versioning == .versionVectors))
        feeds[key] = feed
        peer.answer(request)
        feed.start()
    }

    /// getRev (Connected Client §3.1): the current revision (by its version on CBMobile_4, when
    /// it has one), 304 when it equals `ifNotRev`, 404 when the document does not exist.
    func getRev(_ request: BLIPMessage, _ get: GetRevRequest) throws(GatewayError) {
        guard let docID = get.docID else { throw .badRequest("getRev lacks the id property") }
        guard let document = database.document(docID) else { throw .notFound("missing") }
        let current = protocolVersion >= 4 ? document.versionOrRevID : document.currentRevID
        if let ifNotRev = get.ifNotRev, ifNotRev == current || ifNotRev == document.currentRevID {
            throw .notModified("Not Modified")
        }
        var properties = Properties([.rev: current])
        if document.isDeleted { properties[.deleted] = "true" }
        peer.answer(request, properties: properties, body: document.body)
    }
}
