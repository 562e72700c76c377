import BatchLock
import Dispatch
import Foundation
import Testing

/// The writer of a value holds it for a batch of writes; a reader elsewhere waits for the batch
/// and sees it whole; the writer's own reads inside its batch do not wait on itself.
@Suite struct BatchLockedTests {
    @Test("a reader that asks during a held batch gets the value as the whole batch left it")
    func aReaderSeesTheBatchWhole() {
        let value = BatchLocked([Int]())
        let asking = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        let seen = BatchLocked([Int]())
        value.holding {
            value.withLockedValue { $0.append(1) }
            Thread.detachNewThread {
                #expect(!value.isHeldHere)
                asking.signal()
                let read = value.withLockedValue { $0 }
                seen.withLockedValue { $0 = read }
                answered.signal()
            }
            #expect(asking.wait(timeout: .now() + 60) == .success)
            value.withLockedValue { $0.append(2) }
        }
        #expect(answered.wait(timeout: .now() + 60) == .success)
        #expect(seen.withLockedValue { $0 } == [1, 2])
    }

    @Test("the holder reads, and holds again inside its hold, without waiting on itself; then lets go")
    func theHolderNeverWaitsOnItself() {
        let value = BatchLocked(0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            value.hold()
            #expect(value.isHeldHere)
            value.withLockedValue { $0 += 1 }
            value.holding { value.withLockedValue { $0 += 1 } }
            #expect(value.isHeldHere, "a nested holding leaves the outer hold in place")
            value.release()
            #expect(!value.isHeldHere)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "the holder waited on its own hold")
        #expect(value.withLockedValue { $0 } == 2, "released: another thread takes it at once")
    }
}
