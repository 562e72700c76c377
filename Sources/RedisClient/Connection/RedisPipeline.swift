import NIOCore

/// The commands of one connection that wait for their replies, in the order they were sent:
/// Redis answers in that order, so each reply belongs to the oldest command still waiting.
///
/// A pure state machine over an opaque `Waiter` (the NIO shell keeps a promise and a timer in
/// it): events in, actions out, no I/O. Bounded by ``RedisLimits/maxPendingCommands``; a reply
/// no command waits for, or a command that timed out, ends the connection, since from then on
/// replies cannot be matched with certainty.
struct RedisPipeline<Waiter> {
    let maxPendingCommands: Int
    private var waiting = CircularBuffer<(id: UInt64, waiter: Waiter)>()
    private var nextID: UInt64 = 0
    /// Why the connection ended, once it has: every later command fails with it.
    private(set) var closure: RedisError?

    init(maxPendingCommands: Int) {
        self.maxPendingCommands = maxPendingCommands
    }

    /// Commands sent and not answered.
    var pendingCount: Int { waiting.count }

    enum SendAction {
        /// Write the command; its timeout reports `id`.
        case write(id: UInt64)
        /// Do not write it: fail the waiter with the error.
        case fail(Waiter, RedisError)
    }

    /// A command is to be sent.
    mutating func send(_ waiter: Waiter) -> SendAction {
        if let closure { return .fail(waiter, closure) }
        guard waiting.count < maxPendingCommands else {
            return .fail(waiter, .limitExceeded("Command \(maxPendingCommands + 1) waiting for a reply", limit: "maxPendingCommands",
                                                maximum: maxPendingCommands))
        }
        let id = nextID
        nextID &+= 1
        waiting.append((id, waiter))
        return .write(id: id)
    }

    enum ReplyAction {
        /// The reply answers this waiter's command.
        case answer(Waiter)
        /// No command waits: end the connection with this error.
        case close(RedisError)
        /// The connection has ended already; drop the reply.
        case ignore
    }

    /// A complete reply arrived.
    mutating func receive() -> ReplyAction {
        if closure != nil { return .ignore }
        guard let oldest = waiting.popFirst() else {
            return .close(.protocolViolation("it sent a reply while no command was waiting for one"))
        }
        return .answer(oldest.waiter)
    }

    /// The timeout of command `id` fired. Returns its waiter if it still waits (the shell fails
    /// it as timed out and ends the connection); nil if its reply came first.
    mutating func deadlinePassed(id: UInt64) -> Waiter? {
        guard closure == nil, let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        return waiting.remove(at: index).waiter
    }

    /// The connection ended (or is being ended) because of `error`: returns every waiter, which
    /// the shell fails. Later commands fail with ``closure``, the first error given here.
    mutating func close(_ error: RedisError) -> [Waiter] {
        if closure == nil { closure = error }
        let waiters = waiting.map(\.waiter)
        waiting.removeAll()
        return waiters
    }
}
