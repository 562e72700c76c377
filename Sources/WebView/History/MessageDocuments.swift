import Replication

/// The document IDs a typed message names: changes and proposeChanges entries (and, for their
/// replies, the entries of the request they answer), a rev, a norev, getRev, getAttachment.
enum MessageDocuments {
    static func ids(in content: ReplicationMessage.Content, limit: Int) -> [String] {
        switch content {
        case .changes(let changes): return changes.entries.prefix(limit).map(\.docID)
        case .proposeChanges(let proposal): return proposal.entries.prefix(limit).map(\.docID)
        case .rev(let rev): return rev.docID.map { [$0] } ?? []
        case .norev(let norev): return norev.docID.map { [$0] } ?? []
        case .getRev(let request): return request.docID.map { [$0] } ?? []
        case .getAttachment(let request): return request.docID.map { [$0] } ?? []
        default: return []
        }
    }

    /// For a reply, the IDs of the request it answers.
    static func ids(in message: borrowing ReplicationMessage, limit: Int) -> [String] {
        let own = ids(in: message.content, limit: limit)
        guard own.isEmpty, message.type.isReply, let request = message.request else { return own }
        return ids(in: request.content, limit: limit)
    }
}
