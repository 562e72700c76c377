import Foundation
import NIOCore
import Replication

/// An in-memory replication database: documents with revision trees in the default collection
/// and any named collections, one sequence counter for the whole database, checkpoints stored by
/// client ID, and attachments stored by digest (replication-protocol §3, §4).
///
/// The passive gateway serves one to all its connections, and a ``Replicator`` uses one as its
/// local database. Thread-safe: every access takes one lock (connections live on different event
/// loops); change observers are called after the lock is released. Nothing is persisted.
public final class GatewayDatabase: @unchecked Sendable {
    /// The collection a legacy (getCheckpoint-first) connection replicates.
    public static let defaultCollection = CollectionPath(scope: "_default", name: "_default")

    public let name: String
    /// Every collection, the default one first.
    public let collections: [CollectionPath]
    /// A random identity, used to derive a replicator's checkpoint ID and the source ID of
    /// the versions of local edits.
    public let uuid: String
    /// The source ID of the versions this database gives its own edits (``VersionClock``).
    public let sourceID: String

    struct CollectionStore {
        var documents: [String: GatewayDocument] = [:]
        /// (sequence, docID) in sequence order; an entry is stale once its document moved on.
        var changeLog: [(sequence: UInt64, docID: String)] = []
    }

    struct State {
        var lastSequence: UInt64 = 0
        var stores: [CollectionPath: CollectionStore] = [:]
        var checkpoints: [String: (rev: Int, body: JSONValue)] = [:]
        var attachments: [String: ByteBuffer] = [:]
        var observers: [UInt64: @Sendable () -> Void] = [:]
        var nextObserver: UInt64 = 0
        var clock: VersionClock
    }

    private let lock = NSLock()
    private var state: State

    /// A database holding the default collection plus `collections` (`scope.name`; a bare name
    /// is in `_default`).
    public init(name: String, collections: [CollectionPath] = []) {
        self.name = name
        let identity = UUID()
        let clock = VersionClock(uuid: identity)
        uuid = identity.uuidString
        sourceID = clock.sourceID
        state = State(clock: clock)
        var all = [Self.defaultCollection]
        for path in collections where !all.contains(path) { all.append(path) }
        self.collections = all
        for path in all { state.stores[path] = CollectionStore() }
    }

    public func hasCollection(_ path: CollectionPath) -> Bool { collections.contains(path) }

    /// The latest sequence assigned in this database (0 when empty).
    public var lastSequence: UInt64 { withState { $0.lastSequence } }

    public func document(_ docID: String, in collection: CollectionPath = defaultCollection) -> GatewayDocument? {
        withState { $0.stores[collection]?.documents[docID] }
    }

    /// Document IDs of `collection`, sorted.
    public func documentIDs(in collection: CollectionPath = defaultCollection) -> [String] {
        withState { ($0.stores[collection]?.documents.keys).map { $0.sorted() } ?? [] }
    }

    public func documentCount(in collection: CollectionPath = defaultCollection) -> Int {
        withState { $0.stores[collection]?.documents.count ?? 0 }
    }

    /// Calls `observer` (on the writer's thread, after the write) whenever anything changes.
    /// Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable () -> Void) -> UInt64 {
        withState { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = observer
            return state.nextObserver
        }
    }

    public func removeObserver(_ token: UInt64) { withState { _ = $0.observers.removeValue(forKey: token) } }

    // MARK: internals

    func withState<T>(_ body: (inout State) throws(GatewayError) -> T) throws(GatewayError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Runs a write and then tells the observers, outside the lock.
    func write<T>(_ body: (inout State) throws(GatewayError) -> T) throws(GatewayError) -> T {
        lock.lock()
        let before = state.lastSequence
        let result: T
        do {
            result = try body(&state)
        } catch {
            lock.unlock()
            throw error
        }
        let changed = state.lastSequence != before
        let observers = changed ? Array(state.observers.values) : []
        lock.unlock()
        for observer in observers { observer() }
        return result
    }

    static func store(_ state: inout State, _ collection: CollectionPath) throws(GatewayError) -> CollectionStore {
        guard let store = state.stores[collection] else { throw .notFound("no collection \(collection)") }
        return store
    }
}
