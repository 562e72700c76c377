import BLIPCore

/// What keeping a typed message costs in memory, estimated from what it holds: the struct, the
/// heap storage of its strings (a string of more than 15 UTF-8 bytes is stored out of line),
/// arrays and dictionaries, and JSON values (checkpoint bodies, sequences) node by node. Used by
/// whoever keeps readings for later (the web view's history counts them against its per-session
/// budget), so that a peer sending huge changes batches or checkpoint bodies cannot grow that
/// memory past its limit. Cost: one pass over what the message holds.
extension ReplicationMessage {
    /// Estimated bytes this reading keeps alive, its own content only: a reply's request is
    /// counted with the request.
    public var retainedBytes: Int {
        MemoryLayout<ReplicationMessage>.stride + RetainedSize.string(profile) + RetainedSize.string(collectionName)
            + violations.count * (MemoryLayout<ReplicationError>.stride + 64) + content.retainedBytes
    }
}

extension ReplicationMessage.Content {
    /// Estimated heap bytes of the content beyond its own inline size.
    var retainedBytes: Int {
        typealias Size = RetainedSize
        switch self {
        case .getCheckpoint(let request):
            return Size.string(request.client)
        case .checkpoint(let checkpoint):
            return Size.string(checkpoint.rev) + Size.json(checkpoint.body)
        case .setCheckpoint(let request):
            return Size.string(request.client) + Size.string(request.rev) + Size.json(request.body)
        case .setCheckpointReply(let reply):
            return Size.string(reply.rev)
        case .getCollections(let request):
            return Size.array(request.collections) { Size.string($0.scope) + Size.string($0.name) }
                + Size.array(request.checkpointIDs) { Size.string($0) }
        case .getCollectionsReply(let reply):
            return Size.array(reply.entries) { entry in
                if case .checkpoint(let checkpoint) = entry { return Size.string(checkpoint.rev) + Size.json(checkpoint.body) }
                return 0
            }
        case .subChanges(let request):
            var bytes = Size.string(request.filter) + Size.array(request.channels ?? []) { Size.string($0) }
                + Size.array(request.docIDs ?? []) { Size.string($0) }
            bytes += request.filterParameters.reduce(64) { $0 + 2 * MemoryLayout<String>.stride + Size.string($1.key) + Size.string($1.value) }
            if case .sequence(let value) = request.since { bytes += Size.json(value) }
            return bytes
        case .changes(let request):
            return Size.array(request.entries) { entry in
                Size.json(entry.sequence) + Size.string(entry.docID) + Size.string(entry.revID) + Size.string(entry.vector)
            }
        case .changesReply(let reply):
            return Size.array(reply.answers) { answer in
                if case .wanted(let ancestors) = answer { return Size.array(ancestors) { Size.string($0) } }
                return 0
            }
        case .proposeChanges(let request):
            return Size.array(request.entries) { entry in
                Size.string(entry.docID) + Size.string(entry.revID) + Size.string(entry.serverRevID) + Size.string(entry.vector)
            }
        case .proposeChangesReply(let reply):
            return Size.array(reply.answers) { Size.string($0.serverRevID) }
        case .rev(let rev):
            return Size.string(rev.profile) + Size.string(rev.docID) + Size.string(rev.revID) + Size.json(rev.sequence)
                + Size.string(rev.history) + Size.string(rev.replacedRev)
                + Size.array(rev.attachments) { Size.string($0.name) + Size.string($0.digest) + Size.string($0.contentType) }
        case .norev(let norev):
            return Size.string(norev.docID) + Size.string(norev.revID) + Size.json(norev.sequence) + Size.string(norev.reason)
        case .getAttachment(let request):
            return Size.string(request.digest) + Size.string(request.docID)
        case .proveAttachment(let request):
            return Size.string(request.digest)
        case .proveAttachmentReply(let reply):
            return Size.string(reply.proof)
        case .getRev(let request):
            return Size.string(request.docID) + Size.string(request.ifNotRev)
        case .getRevReply(let reply):
            return Size.string(reply.revID)
        case .error(let reply):
            return Size.string(reply.domain) + Size.string(reply.message)
        case .unsubChanges, .attachment, .ping, .emptyReply, .generic:
            return 0
        }
    }
}

/// Estimates of heap storage, by the shape of the standard library's types on 64-bit platforms.
enum RetainedSize {
    /// A heap allocation's header and rounding, roughly.
    static let allocation = 32

    /// Out-of-line storage of a string (small strings live inside the value).
    static func string(_ text: String?) -> Int {
        guard let text else { return 0 }
        let count = text.utf8.count
        return count > 15 ? count + allocation : 0
    }

    /// An array's buffer of `Element`s plus what each element holds on the heap.
    static func array<Element>(_ elements: [Element], _ each: (Element) -> Int) -> Int {
        guard !elements.isEmpty else { return 0 }
        return allocation + elements.count * MemoryLayout<Element>.stride + elements.reduce(0) { $0 + each($1) }
    }

    /// A JSON value's nodes (depth is bounded by the parser, ``JSONParser/maxDepth``).
    static func json(_ value: JSONValue?) -> Int {
        guard let value else { return 0 }
        switch value {
        case .null, .bool: return 0
        case .number(let text), .string(let text): return string(text)
        case .array(let items): return array(items) { json($0) }
        case .object(let members):
            // A dictionary's table: keys and values side by side, at most 3/4 full.
            let slot = MemoryLayout<String>.stride + MemoryLayout<JSONValue>.stride
            return allocation + members.count * slot * 4 / 3 + members.reduce(0) { $0 + string($1.key) + json($1.value) }
        }
    }
}
