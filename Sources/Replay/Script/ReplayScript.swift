import BLIPCore
import ReplicationNames

/// A request the replaying side sends, with what it waited for in the recording and the reply
/// the recording holds for it.
public struct ScriptedRequest: Sendable {
    /// Position among the replaying side's requests, from 0.
    public var index: Int
    /// The request as recorded (its number is the recorded one; a new connection numbers afresh).
    public var request: BLIPMessage
    public var sentAt: Double
    /// The recorded RPY or ERR; nil for a NoReply request or one never answered.
    public var recordedReply: BLIPMessage?
    public var repliedAt: Double?
    /// Earlier requests whose replies arrived after the previous request went out and before
    /// this one did. Together with the earlier requests' lists: every reply recorded before it.
    public var awaitsReplies: [Int]
    /// How many of the peer's requests that can cause this side's requests
    /// (``ReplayScript/canCauseRequests(_:)``) had arrived before this one was sent.
    public var awaitsPeerRequests: Int

    public init(index: Int, request: BLIPMessage, sentAt: Double, recordedReply: BLIPMessage?, repliedAt: Double?,
                awaitsReplies: [Int], awaitsPeerRequests: Int) {
        self.index = index
        self.request = request
        self.sentAt = sentAt
        self.recordedReply = recordedReply
        self.repliedAt = repliedAt
        self.awaitsReplies = awaitsReplies
        self.awaitsPeerRequests = awaitsPeerRequests
    }

    public var profile: String { request.profile ?? "(no profile)" }
    public var expectsReply: Bool { !request.isNoReply }
}

/// A request the peer sent in the recording, with the replaying side's recorded reply to it and
/// what that reply waited for.
public struct RecordedPeerRequest: Sendable {
    public var index: Int
    public var request: BLIPMessage
    public var receivedAt: Double
    public var recordedReply: BLIPMessage?
    /// How many of the replaying side's own requests had gone out when it arrived.
    public var ownRequestsBefore: Int
    /// How many own requests had gone out when the recorded reply did, when some of them went out
    /// after this request arrived (a gateway asking for a pushed revision's attachment with
    /// `getAttachment` before it answers the `rev`); otherwise 0. The reply waits for them.
    public var replyAwaitsSent: Int
    /// Own requests sent after this one arrived whose replies came back before the recorded reply
    /// went out: the reply waits for them too.
    public var replyAwaitsReplies: [Int]

    public init(index: Int, request: BLIPMessage, receivedAt: Double, recordedReply: BLIPMessage?,
                ownRequestsBefore: Int = 0, replyAwaitsSent: Int = 0, replyAwaitsReplies: [Int] = []) {
        self.index = index
        self.request = request
        self.receivedAt = receivedAt
        self.recordedReply = recordedReply
        self.ownRequestsBefore = ownRequestsBefore
        self.replyAwaitsSent = replyAwaitsSent
        self.replyAwaitsReplies = replyAwaitsReplies
    }

    public var profile: String { request.profile ?? "(no profile)" }
}

/// One side's part of a captured session, ready to be played against a new peer: its requests in
/// order with their dependencies and recorded replies, and the peer's requests with the replies
/// to give them and what each reply waited for. Pure: built from decoded messages, no sockets.
///
/// Replies are paired with requests by number within their number space (wire-format reference
/// §4.4): a RPY/ERR travelling one way answers the request with that number that travelled the
/// other way. Messages of a number space never seen as a request are kept in ``unpairedReplies``.
public struct ReplayScript: Sendable {
    public var side: ReplaySide
    public var handshake: RecordedHandshake
    public var requests: [ScriptedRequest] = []
    public var peerRequests: [RecordedPeerRequest] = []
    /// Replies in the capture whose request is not in it (the capture started late or was cut).
    public var unpairedReplies = 0
    /// Decoding problems the capture reader reported for this session.
    public var captureProblems: [String] = []

    /// Builds the script of `side` from the session's messages in the order they completed.
    public init(side: ReplaySide, handshake: RecordedHandshake, messages: [RecordedMessage]) {
        self.side = side
        self.handshake = handshake
        let outgoing = side.outgoing
        var ownByNumber: [MessageNumber: Int] = [:]
        var peerByNumber: [MessageNumber: Int] = [:]
        var answeredSinceLastSend: [Int] = []
        var causes = 0
        for recorded in messages {
            let message = recorded.message
            switch (message.type, recorded.direction == outgoing) {
            case (.request, true):
                ownByNumber[message.number] = requests.count
                requests.append(ScriptedRequest(
                    index: requests.count, request: message, sentAt: recorded.time, recordedReply: nil,
                    repliedAt: nil, awaitsReplies: answeredSinceLastSend, awaitsPeerRequests: causes))
                answeredSinceLastSend = []
            case (.request, false):
                if Self.canCauseRequests(message.profile) { causes += 1 }
                peerByNumber[message.number] = peerRequests.count
                peerRequests.append(RecordedPeerRequest(index: peerRequests.count, request: message,
                                                        receivedAt: recorded.time, recordedReply: nil,
                                                        ownRequestsBefore: requests.count))
            case (.response, false), (.error, false):
                guard let index = ownByNumber.removeValue(forKey: message.number) else {
                    unpairedReplies += 1
                    continue
                }
                requests[index].recordedReply = message
                requests[index].repliedAt = recorded.time
                answeredSinceLastSend.append(index)
            case (.response, true), (.error, true):
                guard let index = peerByNumber.removeValue(forKey: message.number) else {
                    unpairedReplies += 1
                    continue
                }
                peerRequests[index].recordedReply = message
                let sentSinceArrival = peerRequests[index].ownRequestsBefore..<requests.count
                if !sentSinceArrival.isEmpty {
                    peerRequests[index].replyAwaitsSent = requests.count
                    peerRequests[index].replyAwaitsReplies = sentSinceArrival.filter {
                        requests[$0].expectsReply && requests[$0].recordedReply != nil
                    }
                }
            default:
                continue
            }
        }
    }

    /// Requests whose recorded reply must arrive again (not NoReply, and answered in the recording).
    public var expectedReplies: Int { requests.filter { $0.expectsReply && $0.recordedReply != nil }.count }

    /// Whether a peer request of this profile can be what the other side's next request waits
    /// for. `getCheckpoint` and `setCheckpoint` are answered from stored state and start nothing
    /// (replication-protocol §3); LiteCore saves checkpoints on a 5 s timer, so a served replay
    /// that waited for a recorded `setCheckpoint` before its next `changes` or `rev` would stall
    /// that long (docs/litecore-behaviour.md). Every other profile counts.
    public static func canCauseRequests(_ profile: String?) -> Bool {
        let known = profile.flatMap(ReplicationProfile.init(rawValue:))
        return known != .getCheckpoint && known != .setCheckpoint
    }
}
