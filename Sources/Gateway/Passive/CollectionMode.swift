import Replication

/// Whether a connection is legacy or collection-aware, decided by its first message
/// (replication-protocol §5): getCollections first makes it collection-aware, anything else
/// legacy. Both modes then insist on their own use of the `collection` property (400 otherwise).
enum CollectionMode {
    case undecided
    case legacy
    /// The collections of getCollections by index; nil where this database lacks one.
    case aware([CollectionPath?])

    /// The collection `profile` with `index` operates on, switching an undecided connection to legacy.
    mutating func resolve(_ profile: ReplicationProfile, index: Int?) throws(GatewayError) -> CollectionPath {
        if case .undecided = self, profile != .getCollections { self = .legacy }
        switch self {
        case .undecided:
            return GatewayDatabase.defaultCollection
        case .legacy:
            if index != nil, profile.takesCollection {
                throw .badRequest("\(profile.rawValue) has a collection property, but this connection did not start with getCollections")
            }
            return GatewayDatabase.defaultCollection
        case .aware(let paths):
            guard profile.takesCollection else { return GatewayDatabase.defaultCollection }
            guard let index else {
                throw .badRequest("\(profile.rawValue) lacks the collection property on a collection-aware connection")
            }
            guard index < paths.count else {
                throw .badRequest("Collection index \(index) is out of range: getCollections listed \(paths.count)")
            }
            guard let path = paths[index] else { throw .notFound("collection \(index) does not exist in this database") }
            return path
        }
    }
}
