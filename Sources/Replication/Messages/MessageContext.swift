/// What parsing a message needs to know about its session: the revision syntax agreed in
/// subChanges, the collections resolved by getCollections, and how much JSON to parse at most.
public struct MessageContext: Sendable {
    /// nil until a subChanges fixes it; revision IDs are then accepted in either syntax (§4).
    public var versioning: Versioning?
    /// The collections of the session's getCollections request, by index (§3 "getCollections").
    public var collections: [CollectionPath]
    /// Bodies larger than this are not parsed (a finding says so); protects against absurd sizes.
    public var maxJSONBodyBytes: Int

    public init(versioning: Versioning? = nil, collections: [CollectionPath] = [],
                maxJSONBodyBytes: Int = 16 * 1024 * 1024) {
        self.versioning = versioning
        self.collections = collections
        self.maxJSONBodyBytes = maxJSONBodyBytes
    }
}

/// A collection named `[scope.]collection` (§3 "getCollections"); the scope defaults to `_default`.
public struct CollectionPath: Sendable, Hashable, Codable, CustomStringConvertible {
    public var scope: String
    public var name: String

    public init(scope: String = "_default", name: String) {
        self.scope = scope
        self.name = name
    }

    /// Parses `scope.collection` or a bare `collection`.
    public init(parsing text: String) {
        if let dot = text.firstIndex(of: ".") {
            self.init(scope: String(text[..<dot]), name: String(text[text.index(after: dot)...]))
        } else {
            self.init(name: text)
        }
    }

    public var description: String { "\(scope).\(name)" }
}
