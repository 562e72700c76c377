/// Decides when the replaying side may send its next scripted request. A pure state machine:
/// the shell reports what arrived (``replyArrived(for:)``, ``peerRequestArrived()``) and what it
/// sent (``didSend(_:)``), and asks ``next(at:)`` what to do. Requests go out strictly in
/// recorded order, so request numbers match the recording's order (wire-format reference §4.4).
///
/// It ends (``Decision/finished``) once every request was sent and every reply that the
/// recording holds came back; in the client role also once at least as many peer requests
/// arrived as were recorded (the gateway's pushes are part of the session the client waits
/// out). A gateway that sends fewer never lets it finish by itself: the shell's stall limit ends
/// such a replay. In the server role the client decides when the session ends (it closes), and
/// how many requests it sends (a replicator saves checkpoints as often as its timing makes it).
public struct ReplayScheduler: Sendable {
    public enum Decision: Sendable, Equatable {
        /// Send request `index` now.
        case send(Int)
        /// Wait for something to arrive.
        case waitForPeer
        /// Wait until `time` (seconds since the replay started), or for something to arrive.
        case waitUntil(Double)
        case finished
    }

    public let timing: ReplayTiming
    private let awaitsReplies: [[Int]]
    private let awaitsPeerRequests: [Int]
    private let offsets: [Double]
    private let expectsReply: [Bool]
    /// Peer requests to wait for before finishing: all recorded ones in the client role, none in the server role.
    private let awaitedPeerRequests: Int
    private var replied: [Bool]
    private var nextIndex = 0
    private var peerRequests = 0
    /// Peer requests that can cause this side's requests (``ReplayScript/canCauseRequests(_:)``).
    private var causes = 0

    public init(script: ReplayScript, timing: ReplayTiming) {
        self.timing = timing
        awaitsReplies = script.requests.map(\.awaitsReplies)
        awaitsPeerRequests = script.requests.map(\.awaitsPeerRequests)
        let first = script.requests.first?.sentAt ?? 0
        offsets = script.requests.map { $0.sentAt - first }
        expectsReply = script.requests.map { $0.expectsReply && $0.recordedReply != nil }
        awaitedPeerRequests = script.side == .client ? script.peerRequests.count : 0
        replied = Array(repeating: false, count: script.requests.count)
    }

    /// Requests sent so far.
    public var sent: Int { nextIndex }
    /// Replies still awaited for requests already sent.
    public var outstandingReplies: Int { (0..<nextIndex).filter { expectsReply[$0] && !replied[$0] }.count }
    public var peerRequestsSeen: Int { peerRequests }

    public mutating func replyArrived(for index: Int) {
        guard replied.indices.contains(index) else { return }
        replied[index] = true
    }

    public mutating func peerRequestArrived(profile: String?) {
        peerRequests += 1
        if ReplayScript.canCauseRequests(profile) { causes += 1 }
    }

    public mutating func didSend(_ index: Int) {
        precondition(index == nextIndex, "requests are sent in recorded order")
        nextIndex += 1
    }

    /// What to do at `now` (seconds since the replay started).
    public func next(at now: Double) -> Decision {
        guard nextIndex < offsets.count else {
            return outstandingReplies == 0 && peerRequests >= awaitedPeerRequests ? .finished : .waitForPeer
        }
        switch timing {
        case .dependencies:
            let ready = awaitsReplies[nextIndex].allSatisfy { replied[$0] || !expectsReply[$0] }
                && causes >= awaitsPeerRequests[nextIndex]
            return ready ? .send(nextIndex) : .waitForPeer
        case .recorded(let speed):
            let due = offsets[nextIndex] / speed
            return now >= due ? .send(nextIndex) : .waitUntil(due)
        }
    }

    /// Why request `index` cannot go yet, for a stall report.
    public func blocker(of index: Int) -> String {
        guard index < awaitsReplies.count else { return "nothing" }
        let missing = awaitsReplies[index].filter { expectsReply[$0] && !replied[$0] }
        var parts: [String] = []
        if !missing.isEmpty { parts.append("replies to requests \(missing.map(String.init).joined(separator: ", "))") }
        if causes < awaitsPeerRequests[index] {
            parts.append("\(awaitsPeerRequests[index] - causes) more peer request(s)")
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: " and ")
    }
}
