import NIOCore

extension RedisError {
    /// The value of `future`, its failure as a ``RedisError`` (any other error, which the
    /// module's own futures do not fail with, as ``Code/closed``).
    static func awaiting<Value: Sendable>(_ future: EventLoopFuture<Value>) async throws(RedisError) -> Value {
        do {
            return try await future.get()
        } catch let error as RedisError {
            throw error
        } catch {
            throw .closed("\(error)")
        }
    }
}
