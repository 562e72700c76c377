import Foundation

/// Wakes continuous pushers when the local database changes; finished on stop. In one-shot
/// mode ``next()`` returns false at once.
final class LocalChanges: @unchecked Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let database: GatewayDatabase
    private let token: UInt64?
    private let continuous: Bool
    private let lock = NSLock()
    private var finished = false

    init(database: GatewayDatabase, continuous: Bool) {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.database = database
        self.continuous = continuous
        let continuation = self.continuation
        token = continuous ? database.addObserver { continuation.yield() } : nil
    }

    /// Waits for a change; false once finished (stop) or when not continuous.
    /// Only one pusher may wait at a time per instance.
    func next() async -> Bool {
        guard continuous, !lock.withLock({ finished }) else { return false }
        var iterator = stream.makeAsyncIterator()
        return await iterator.next() != nil
    }

    func finish() {
        lock.withLock { finished = true }
        if let token { database.removeObserver(token) }
        continuation.finish()
    }
}
