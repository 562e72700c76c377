import NIOConcurrencyHelpers
import Replication
import Testing
@testable import Gateway

/// Pull progress reaches the checkpoints in the order it was made, newest first-come: a
/// checkpoint never goes back, a burst costs one save, and nothing noted before the end is lost.
@Suite struct PullProgressTests {
    /// Saves as they happen; with `holdingFirst`, the first one waits until the test lets it finish.
    final class Saves: Sendable {
        private let holdingFirst: Bool
        private let log = NIOLockedValueBox<[String]>([])
        private let firstStarted = AsyncStream<Void>.makeStream()
        private let firstReleased = AsyncStream<Void>.makeStream()

        init(holdingFirst: Bool) { self.holdingFirst = holdingFirst }

        var all: [String] { log.withLockedValue { $0 } }

        func save(_ index: Int, _ sequence: JSONValue) async {
            let first = log.withLockedValue { log in
                log.append("\(index):\(sequence)")
                return log.count == 1
            }
            guard first, holdingFirst else { return }
            firstStarted.continuation.finish()
            for await _ in firstReleased.stream {}
        }

        func waitForFirstSave() async { for await _ in firstStarted.stream {} }
        func releaseFirstSave() { firstReleased.continuation.finish() }
    }

    @Test func notesMadeDuringASaveAreSavedOnceNewestFirst() async throws {
        let progress = PullProgress()
        let saves = Saves(holdingFirst: true)
        let saver = Task { await progress.saveAll(saves.save) }

        progress.note(0, sequence: .number("1"))
        await saves.waitForFirstSave()
        // While the first save is in flight, collection 0 moves on three times and collection 1 once.
        progress.note(0, sequence: .number("2"))
        progress.note(1, sequence: .number("7"))
        progress.note(0, sequence: .number("3"))
        progress.note(0, sequence: .number("4"))
        progress.finish()
        saves.releaseFirstSave()
        await saver.value

        #expect(saves.all == ["0:1", "0:4", "1:7"])
    }

    @Test func whatIsNotedBeforeTheEndIsSavedBeforeSaveAllReturns() async throws {
        let progress = PullProgress()
        let saves = Saves(holdingFirst: false)
        for sequence in 1...50 { progress.note(0, sequence: .number(String(sequence))) }
        progress.finish()
        await progress.saveAll(saves.save)
        #expect(saves.all == ["0:50"])
    }
}
