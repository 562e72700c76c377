import BLIPCore
import Replay
import Testing

/// When the next request may go: after what the recording says it waited for, or at recorded gaps.
@Suite struct ReplaySchedulerTests {
    /// Client: A at 0 s, B at 1 s right after A's reply, then the server's request, C at 3 s.
    static func script() -> ReplayScript {
        ReplayScript(side: .client, handshake: RecordedHandshake(), messages: messages())
    }

    static func messages() -> [RecordedMessage] {
        func request(_ profile: String, _ number: MessageNumber) -> BLIPMessage {
            var message = BLIPMessage.request(profile: profile)
            message.number = number
            return message
        }
        let messages: [RecordedMessage] = [
            .init(direction: .clientToServer, message: request("A", 1), time: 0),
            .init(direction: .serverToClient, message: .reply(to: request("A", 1)), time: 0.5),
            .init(direction: .clientToServer, message: request("B", 2), time: 1),
            .init(direction: .serverToClient, message: request("push", 1), time: 2),
            .init(direction: .clientToServer, message: .reply(to: request("push", 1)), time: 2.1),
            .init(direction: .clientToServer, message: request("C", 3), time: 3),
            .init(direction: .serverToClient, message: .reply(to: request("B", 2)), time: 3.5),
            .init(direction: .serverToClient, message: .reply(to: request("C", 3)), time: 4),
        ]
        return messages
    }

    @Test func dependencyModeSendsEachRequestOnlyAfterWhatPrecededIt() {
        var scheduler = ReplayScheduler(script: Self.script(), timing: .dependencies)
        #expect(scheduler.next(at: 0) == .send(0))
        scheduler.didSend(0)
        #expect(scheduler.next(at: 100) == .waitForPeer)
        scheduler.replyArrived(for: 0)
        #expect(scheduler.next(at: 0) == .send(1))
        scheduler.didSend(1)
        // C waited for the server's request in the recording, not for B's reply.
        #expect(scheduler.next(at: 0) == .waitForPeer)
        #expect(scheduler.blocker(of: 2) == "1 more peer request(s)")
        scheduler.peerRequestArrived(profile: "test")
        #expect(scheduler.next(at: 0) == .send(2))
        scheduler.didSend(2)
        #expect(scheduler.next(at: 0) == .waitForPeer)
        scheduler.replyArrived(for: 2)
        #expect(scheduler.outstandingReplies == 1)
        #expect(scheduler.next(at: 0) == .waitForPeer)
        scheduler.replyArrived(for: 1)
        #expect(scheduler.next(at: 0) == .finished)
    }

    /// The server side of the same session: its one request waits for the client's first
    /// request; once answered the server side is done, however many requests the client sends.
    @Test func theServerSideFinishesWithoutWaitingForTheClientsLaterRequests() {
        let script = Self.script()
        let server = ReplayScript(side: .server, handshake: script.handshake, messages: Self.messages())
        #expect(server.peerRequests.count == 3)
        var scheduler = ReplayScheduler(script: server, timing: .dependencies)
        #expect(scheduler.next(at: 0) == .waitForPeer)
        scheduler.peerRequestArrived(profile: "test")
        #expect(scheduler.next(at: 0) == .waitForPeer)
        scheduler.peerRequestArrived(profile: "test")
        #expect(scheduler.next(at: 0) == .send(0))
        scheduler.didSend(0)
        scheduler.replyArrived(for: 0)
        #expect(scheduler.next(at: 0) == .finished)
    }

    /// A served pull: the recorded client saved its checkpoint (on LiteCore's 5 s timer) before
    /// the server's next `changes`. The replay does not wait for that save: checkpoint requests
    /// cause nothing on the server's side.
    @Test func aServedReplayDoesNotWaitForTheClientsCheckpointSaves() {
        func request(_ profile: String, _ number: MessageNumber) -> BLIPMessage {
            var message = BLIPMessage.request(profile: profile)
            message.number = number
            return message
        }
        let messages: [RecordedMessage] = [
            .init(direction: .clientToServer, message: request("getCheckpoint", 1), time: 0),
            .init(direction: .clientToServer, message: request("subChanges", 2), time: 0.1),
            .init(direction: .serverToClient, message: request("changes", 1), time: 0.2),
            .init(direction: .clientToServer, message: .reply(to: request("changes", 1)), time: 0.3),
            .init(direction: .clientToServer, message: request("setCheckpoint", 3), time: 5.3),
            .init(direction: .serverToClient, message: request("changes", 2), time: 5.4),
        ]
        let script = ReplayScript(side: .server, handshake: RecordedHandshake(), messages: messages)
        #expect(script.requests.map(\.awaitsPeerRequests) == [1, 1])
        var scheduler = ReplayScheduler(script: script, timing: .dependencies)
        scheduler.peerRequestArrived(profile: "getCheckpoint")
        #expect(scheduler.next(at: 0) == .waitForPeer)
        scheduler.peerRequestArrived(profile: "subChanges")
        #expect(scheduler.next(at: 0) == .send(0))
        scheduler.didSend(0)
        scheduler.replyArrived(for: 0)
        #expect(scheduler.next(at: 0) == .send(1), "the second changes goes without the setCheckpoint")
    }

    @Test func recordedTimingKeepsTheGapsDividedBySpeed() {
        var scheduler = ReplayScheduler(script: Self.script(), timing: .recorded(speed: 2))
        #expect(scheduler.next(at: 0) == .send(0))
        scheduler.didSend(0)
        // B was sent 1 s after A: at x2, 0.5 s into the replay, whatever has arrived.
        #expect(scheduler.next(at: 0.1) == .waitUntil(0.5))
        #expect(scheduler.next(at: 0.5) == .send(1))
        scheduler.didSend(1)
        #expect(scheduler.next(at: 0.6) == .waitUntil(1.5))
    }

    @Test func timingArgumentsParse() {
        #expect(ReplayTiming(argument: "deps") == .dependencies)
        #expect(ReplayTiming(argument: "recorded") == .recorded(speed: 1))
        #expect(ReplayTiming(argument: "x4") == .recorded(speed: 4))
        #expect(ReplayTiming(argument: "x0.5") == .recorded(speed: 0.5))
        #expect(ReplayTiming(argument: "x0") == nil)
        #expect(ReplayTiming(argument: "fast") == nil)
    }
}
