/// getCollections [3.1+]: the collections to replicate and one checkpoint ID for each; sent
/// first, it makes the connection collection-aware (replication-protocol §3 "getCollections", §5).
public struct GetCollectionsRequest: Sendable, Equatable {
    public var collections: [CollectionPath] = []
    public var checkpointIDs: [String] = []

    init(reading reader: inout MessageReader) {
        guard let body = reader.jsonBody() else { return }
        guard let names = body["collections"]?.arrayValue, let ids = body["checkpoint_ids"]?.arrayValue else {
            reader.report(.wrongShape("getCollections body", expected: "{\"collections\": [...], \"checkpoint_ids\": [...]}"))
            return
        }
        for name in names {
            guard let text = name.stringValue else {
                reader.report(.wrongShape("getCollections collection \(name)", expected: "a \"[scope.]collection\" string"))
                continue
            }
            collections.append(CollectionPath(parsing: text))
        }
        checkpointIDs = ids.compactMap(\.stringValue)
        if checkpointIDs.count != ids.count {
            reader.report(.wrongShape("getCollections checkpoint_ids", expected: "an array of strings"))
        }
        if names.count != ids.count {
            reader.report(.wrongShape("getCollections body", expected: "collections and checkpoint_ids of equal length"))
        }
    }
}

/// getCollections' reply: per requested collection a checkpoint, `{}` for none yet, or `null`
/// when the peer lacks the collection and replication must not proceed (§3 "getCollections").
public struct GetCollectionsReply: Sendable, Equatable {
    public enum Entry: Sendable, Equatable {
        case checkpoint(Checkpoint)
        case noCheckpoint
        case missingCollection
    }

    public var entries: [Entry] = []

    init(reading reader: inout MessageReader, requested: Int?) {
        guard let body = reader.jsonBody() else { return }
        guard let items = body.arrayValue else {
            reader.report(.wrongShape("getCollections reply", expected: "a JSON array"))
            return
        }
        for item in items {
            switch item {
            case .null: entries.append(.missingCollection)
            case .object(let members) where members.isEmpty: entries.append(.noCheckpoint)
            case .object(let members):
                let rev = members[PropertyName.rev.rawValue]?.stringValue ?? members["_rev"]?.stringValue
                entries.append(.checkpoint(Checkpoint(rev: rev, body: item)))
            default:
                reader.report(.wrongShape("getCollections reply entry \(item)", expected: "an object or null"))
            }
        }
        if let requested, requested != items.count {
            reader.report(.replyCountMismatch(ReplicationProfile.getCollections.rawValue, entries: requested, answers: items.count))
        }
    }
}
