import Foundation

/// Which live sessions use which checkpoint client ID, shared by all sessions of a relay so that
/// two replicators fighting over one checkpoint (a classic cause of 409 loops,
/// replication-protocol §3 "setCheckpoint") are spotted. Thread-safe.
public final class CheckpointRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var sessionsByClient: [String: Set<Int>] = [:]
    private var clientsBySession: [Int: Set<String>] = [:]

    public init() {}

    /// Records that `session` uses `client` and returns the other live sessions that do too.
    public func claim(client: String, session: Int) -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        var sessions = sessionsByClient[client, default: []]
        sessions.insert(session)
        sessionsByClient[client] = sessions
        clientsBySession[session, default: []].insert(client)
        return sessions.subtracting([session]).sorted()
    }

    /// Forgets every claim of `session` (call when it closes).
    public func release(session: Int) {
        lock.lock()
        defer { lock.unlock() }
        for client in clientsBySession.removeValue(forKey: session) ?? [] {
            sessionsByClient[client]?.remove(session)
            if sessionsByClient[client]?.isEmpty == true { sessionsByClient[client] = nil }
        }
    }

    /// Client IDs claimed by more than one live session, with those sessions.
    public var sharedClients: [String: [Int]] {
        lock.lock()
        defer { lock.unlock() }
        return sessionsByClient.filter { $0.value.count > 1 }.mapValues { $0.sorted() }
    }
}
