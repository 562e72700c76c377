import NIOCore
@testable import RedisClient
import Testing

/// The pure machines of a connection and a client: replies matched in order, the pending
/// limit, timeouts and closes; when to reconnect and how long to wait.
@Suite struct RedisPipelineTests {
    @Test func repliesAnswerCommandsInTheOrderSent() {
        var pipeline = RedisPipeline<String>(maxPendingCommands: 10)
        for name in ["a", "b", "c"] {
            guard case .write = pipeline.send(name) else { Issue.record("\(name) not written"); return }
        }
        var answered: [String] = []
        for _ in 0..<3 {
            if case let .answer(waiter) = pipeline.receive() { answered.append(waiter) }
        }
        #expect(answered == ["a", "b", "c"])
        guard case let .close(error) = pipeline.receive() else { Issue.record("an unasked reply was accepted"); return }
        #expect(error.code == .protocolViolation)
        #expect(pipeline.closure == nil, "the shell ends the connection, with close(_:)")
        #expect(pipeline.close(error).isEmpty)
        guard case let .fail(_, later) = pipeline.send("d") else { Issue.record("a closed pipeline took a command"); return }
        #expect(later == error)
    }

    @Test func aCommandBeyondThePendingLimitFailsAtOnceAndTheOthersGoOn() {
        var pipeline = RedisPipeline<Int>(maxPendingCommands: 2)
        _ = pipeline.send(1)
        _ = pipeline.send(2)
        guard case let .fail(waiter, error) = pipeline.send(3) else { Issue.record("the third was written"); return }
        #expect(waiter == 3 && error.code == .limitExceeded)
        #expect(error.description.contains("maxPendingCommands"))
        #expect(pipeline.closure == nil)
        if case let .answer(first) = pipeline.receive() { #expect(first == 1) } else { Issue.record("no answer") }
        guard case .write = pipeline.send(4) else { Issue.record("room was not made"); return }
        #expect(pipeline.pendingCount == 2)
    }

    @Test func aDeadlineFindsItsCommandOnlyWhileItWaits() {
        var pipeline = RedisPipeline<String>(maxPendingCommands: 10)
        guard case let .write(first) = pipeline.send("a"), case let .write(second) = pipeline.send("b") else {
            Issue.record("not written"); return
        }
        _ = pipeline.receive()
        #expect(pipeline.deadlinePassed(id: first) == nil, "answered before its deadline")
        #expect(pipeline.deadlinePassed(id: second) == "b")
        #expect(pipeline.pendingCount == 0)
    }

    @Test func closingReturnsEveryWaiterAndKeepsTheFirstReason() {
        var pipeline = RedisPipeline<Int>(maxPendingCommands: 10)
        _ = pipeline.send(1)
        _ = pipeline.send(2)
        #expect(pipeline.close(.closed("first")) == [1, 2])
        #expect(pipeline.close(.shutDown) == [])
        #expect(pipeline.closure == .closed("first"))
        guard case .ignore = pipeline.receive() else { Issue.record("a reply after the close was matched"); return }
    }

    @Test func backoffDoublesUpToItsCeilingWithinTheJitterBand() {
        let backoff = RedisBackoff(initialDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect(backoff.delay(afterFailures: 0, jitter: 1) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 0, jitter: 0) == .milliseconds(50))
        #expect(backoff.delay(afterFailures: 2, jitter: 1) == .milliseconds(400))
        #expect(backoff.delay(afterFailures: 4, jitter: 1) == .seconds(1))
        #expect(backoff.delay(afterFailures: 1_000, jitter: 1) == .seconds(1))
        #expect(backoff.delay(afterFailures: 1_000, jitter: 0.5) == .milliseconds(750))
    }

    @Test func reconnectionWaitsLongerAfterEachFailureAndResetsOnSuccess() {
        var machine = RedisReconnection(backoff: RedisBackoff(initialDelay: .milliseconds(100), maxDelay: .seconds(5)))
        #expect(machine.start() == .connect)
        #expect(machine.start() == .none)
        #expect(machine.attemptFailed(.closed("refused"), jitter: 1) == .retry(after: .milliseconds(100)))
        #expect(machine.delayElapsed() == .connect)
        #expect(machine.attemptFailed(.closed("refused"), jitter: 1) == .retry(after: .milliseconds(200)))
        #expect(machine.lastFailure == .closed("refused") && machine.failures == 2)
        #expect(machine.delayElapsed() == .connect)
        #expect(machine.attemptSucceeded() == .none)
        #expect(machine.state == .connected && machine.failures == 0 && machine.lastFailure == nil)
        #expect(machine.connectionLost(.closed("dropped"), jitter: 1) == .retry(after: .milliseconds(100)))
        #expect(machine.state == .waiting)
        #expect(machine.shutdown() == .none)
        #expect(machine.delayElapsed() == .none, "no attempt after shutdown")
        #expect(machine.attemptSucceeded() == .closeConnection)
    }
}
