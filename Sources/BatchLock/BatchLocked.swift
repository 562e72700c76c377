import Foundation
import Synchronization

/// A value behind a lock that the one thread writing it can hold for a whole batch of writes —
/// a relay session's event loop, for one read of the session, however many messages it carries
/// — while readers on other threads (the admin listener, a web viewer, a scrape) take the lock
/// for each read and so wait for the batch to end.
///
/// While a thread holds it (``hold()`` … ``release()``, or ``holding(_:)``), that thread's
/// ``withLockedValue(_:)`` calls run at once: one atomic load, no lock, and no waiting on itself
/// (an observer on the session's thread may read what it is being fed). A thread holds it once
/// at a time: holds do not nest (``holding(_:)`` inside a hold just runs).
///
/// Lock order: never call into one while holding another lock that its writer may take while
/// it holds this one; copy what you need out of your own table first.
public final class BatchLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    /// The thread that holds ``lock`` through ``hold()`` (0: none). Written only by that thread,
    /// under the lock; any thread reads it to learn whether it is the holder (only the holder can
    /// find its own identity there).
    private let holder = Atomic<UInt>(0)
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` on the value: at once on the holding thread, under the lock elsewhere.
    @inline(__always)
    public func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        if holder.load(ordering: .relaxed) == Self.currentThread { return try body(&value) }
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Whether the calling thread holds it.
    public var isHeldHere: Bool { holder.load(ordering: .relaxed) == Self.currentThread }

    /// Takes it for this thread until ``release()``. The holder must not hold it again first.
    public func hold() {
        assert(!isHeldHere, "held twice by one thread")
        lock.lock()
        holder.store(Self.currentThread, ordering: .relaxed)
    }

    /// Ends this thread's ``hold()``.
    public func release() {
        assert(isHeldHere, "released by a thread that does not hold it")
        holder.store(0, ordering: .relaxed)
        lock.unlock()
    }

    /// Runs `batch` holding it (or, on a thread that holds it already, just runs `batch`).
    public func holding<T>(_ batch: () throws -> T) rethrows -> T {
        if isHeldHere { return try batch() }
        hold()
        defer { release() }
        return try batch()
    }

    /// The calling thread's identity (never 0).
    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
