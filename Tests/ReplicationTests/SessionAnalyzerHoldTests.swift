import BLIPCore
import Dispatch
import Foundation
import Testing
@testable import Replication

/// The relay's event loop holds a session's analyzer for one input at a time (a read batch of
/// several messages): its own calls take no lock then, and a reader elsewhere sees the batch
/// whole.
@Suite("Session analyzer: held for a batch by the thread that feeds it")
struct SessionAnalyzerHoldTests {
    /// A reader that asks while the feeding thread holds the analyzer waits for the whole batch:
    /// it never sees the request without its reply.
    @Test("a reader on another thread sees a held batch whole, not half of it")
    func aReaderWaitsForTheWholeBatch() {
        let analyzer = SessionAnalyzer()
        let asking = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        let seen = Seen()
        analyzer.holding {
            analyzer.observe(message: request("getCheckpoint", 1, [("client", "cp")]), from: .clientToServer, at: 1)
            Thread.detachNewThread {
                asking.signal()
                let summary = analyzer.summary()
                seen.set(summary.messagesFromClient + summary.messagesFromServer)
                answered.signal()
            }
            // The reader has begun asking while the batch is held; the batch goes on.
            #expect(asking.wait(timeout: .now() + 60) == .success)
            analyzer.observe(message: reply(1, [("rev", "1-a")], body: "{}"), from: .serverToClient, at: 2)
        }
        #expect(answered.wait(timeout: .now() + 60) == .success)
        #expect(seen.value == 2, "the reader saw the batch's request and its reply, or nothing of it")
    }

    /// The feeding thread may read what it holds (an observer reading the analyzer as a message
    /// is reported), and hold it again inside a hold: neither waits on itself.
    @Test("the holding thread reads and holds again without waiting on itself")
    func theHolderIsNotBlockedByItself() {
        let analyzer = SessionAnalyzer()
        let done = DispatchSemaphore(value: 0)
        let counted = Seen()
        Thread.detachNewThread {
            analyzer.holding {
                analyzer.observe(message: request("getCheckpoint", 1, [("client", "cp")]), from: .clientToServer, at: 1)
                analyzer.holding {
                    counted.set(analyzer.summary().messagesFromClient)
                }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "the holder waited on its own hold")
        #expect(counted.value == 1)
        // Let go: another thread gets it at once.
        #expect(analyzer.summary().messagesFromClient == 1)
    }

    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = -1
        func set(_ value: Int) { lock.withLock { stored = value } }
        var value: Int { lock.withLock { stored } }
    }
}
