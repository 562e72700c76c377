import NIOConcurrencyHelpers
import Replication

/// The pull's progress on its way to the checkpoints: the event loop notes each collection's
/// latest sequence in order (``note(_:sequence:)``); one task (``saveAll(_:)``) saves the newest
/// of each, skipping the ones overtaken while a save was in flight, so a checkpoint never goes
/// back and a fast pull is not held to one `setCheckpoint` round trip per batch. After
/// ``finish()`` the task saves what is left and ends.
final class PullProgress: Sendable {
    private let latest = NIOLockedValueBox<[Int: JSONValue]>([:])
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init() {
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Collection `index` is done through `sequence` (called in the order progress is made).
    func note(_ index: Int, sequence: JSONValue) {
        latest.withLockedValue { $0[index] = sequence }
        signal.yield()
    }

    /// No more progress: ``saveAll(_:)`` returns once what was noted is saved.
    func finish() { signal.finish() }

    /// Saves noted progress until ``finish()``, one collection's newest sequence at a time
    /// (`save(index, sequence)` awaited before the next is taken). The replicator's `save` notes
    /// the sequence in the collection's ``CheckpointKeeper`` and stores it; a failed save is left
    /// to the next one, or to the replication's final save.
    func saveAll(_ save: (Int, JSONValue) async -> Void) async {
        for await _ in signals {
            let taken = latest.withLockedValue { latest in
                defer { latest = [:] }
                return latest
            }
            for (index, sequence) in taken.sorted(by: { $0.key < $1.key }) { await save(index, sequence) }
        }
    }
}
