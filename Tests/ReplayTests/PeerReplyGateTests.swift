import BLIPCore
import Replay
import Testing

/// A recorded gateway answered a pushed `rev` only after asking for its attachment and getting
/// it; the replay gives that answer in the same place, never before.
@Suite struct PeerReplyGateTests {
    static func request(_ profile: String, _ number: MessageNumber, _ properties: Properties = [:]) -> BLIPMessage {
        var message = BLIPMessage.request(profile: profile, properties: properties)
        message.number = number
        return message
    }

    /// The server's side of a push with an attachment: the client's `proposeChanges` is answered
    /// at once; its `rev` arrives, the server sends `getAttachment`, the client answers it, and
    /// only then does the server answer the `rev`; a `setCheckpoint` follows.
    static func pushWithAttachment() -> ReplayScript {
        let propose = request("proposeChanges", 1)
        let rev = request("rev", 2, ["id": "doc", "rev": "1-a"])
        let getAttachment = request("getAttachment", 1, ["digest": "sha1-x"])
        let checkpoint = request("setCheckpoint", 3)
        let messages: [RecordedMessage] = [
            .init(direction: .clientToServer, message: propose, time: 0),
            .init(direction: .serverToClient, message: .reply(to: propose), time: 0.1),
            .init(direction: .clientToServer, message: rev, time: 0.2),
            .init(direction: .serverToClient, message: getAttachment, time: 0.3),
            .init(direction: .clientToServer, message: .reply(to: getAttachment), time: 0.4),
            .init(direction: .serverToClient, message: .reply(to: rev), time: 0.5),
            .init(direction: .clientToServer, message: checkpoint, time: 0.6),
            .init(direction: .serverToClient, message: .reply(to: checkpoint), time: 0.7),
        ]
        return ReplayScript(side: .server, handshake: RecordedHandshake(), messages: messages)
    }

    @Test func theScriptSaysWhatEachRecordedReplyWaitedFor() {
        let script = Self.pushWithAttachment()
        #expect(script.requests.map(\.profile) == ["getAttachment"])
        #expect(script.peerRequests.map(\.profile) == ["proposeChanges", "rev", "setCheckpoint"])
        // proposeChanges and setCheckpoint were answered with nothing sent in between.
        #expect(script.peerRequests[0].replyAwaitsSent == 0 && script.peerRequests[0].replyAwaitsReplies.isEmpty)
        #expect(script.peerRequests[2].replyAwaitsSent == 0 && script.peerRequests[2].replyAwaitsReplies.isEmpty)
        // The rev's reply went after getAttachment went out and came back.
        #expect(script.peerRequests[1].ownRequestsBefore == 0)
        #expect(script.peerRequests[1].replyAwaitsSent == 1)
        #expect(script.peerRequests[1].replyAwaitsReplies == [0])
    }

    @Test func theRevsReplyWaitsForTheAttachmentAndOthersDoNot() {
        let script = Self.pushWithAttachment()
        var gate = PeerReplyGate()
        let proposeReply = BLIPMessage.reply(to: Self.request("proposeChanges", 1))
        #expect(gate.reply(proposeReply, recorded: script.peerRequests[0]).map(\.number) == [1])

        let revReply = BLIPMessage.reply(to: Self.request("rev", 2))
        #expect(gate.reply(revReply, recorded: script.peerRequests[1]).isEmpty, "held for getAttachment")
        // A request answered at once in the recording is not held behind the rev.
        let checkpointReply = BLIPMessage.reply(to: Self.request("setCheckpoint", 3))
        #expect(gate.reply(checkpointReply, recorded: script.peerRequests[2]).map(\.number) == [3])
        #expect(gate.heldCount == 1)

        #expect(gate.didSend(0).isEmpty, "sent, but its reply is not back")
        #expect(gate.replyArrived(for: 0).map(\.number) == [2])
        #expect(gate.heldCount == 0)
    }

    @Test func repliesReleasedTogetherGoInTheOrderTheirRequestsArrived() {
        // Two revs each waiting for the same getAttachment.
        let first = RecordedPeerRequest(index: 0, request: Self.request("rev", 1), receivedAt: 0, recordedReply: nil,
                                        ownRequestsBefore: 0, replyAwaitsSent: 1, replyAwaitsReplies: [0])
        let second = RecordedPeerRequest(index: 1, request: Self.request("rev", 2), receivedAt: 0, recordedReply: nil,
                                         ownRequestsBefore: 0, replyAwaitsSent: 1, replyAwaitsReplies: [0])
        var gate = PeerReplyGate()
        #expect(gate.reply(.reply(to: Self.request("rev", 1)), recorded: first).isEmpty)
        #expect(gate.reply(.reply(to: Self.request("rev", 2)), recorded: second).isEmpty)
        #expect(gate.didSend(0).isEmpty)
        #expect(gate.replyArrived(for: 0).map(\.number) == [1, 2])
    }

    @Test func aReplyThatWaitedOnlyForASendGoesWithIt() {
        // The recorded side sent a NoReply request (or one never answered) before replying.
        let recorded = RecordedPeerRequest(index: 0, request: Self.request("rev", 1), receivedAt: 0, recordedReply: nil,
                                           ownRequestsBefore: 2, replyAwaitsSent: 3, replyAwaitsReplies: [])
        var gate = PeerReplyGate()
        #expect(gate.reply(.reply(to: Self.request("rev", 1)), recorded: recorded).isEmpty)
        #expect(gate.didSend(1).isEmpty)
        #expect(gate.didSend(2).map(\.number) == [1])
    }
}
