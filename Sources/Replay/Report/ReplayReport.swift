/// The outcome of a replay: for each request the replaying side sent, the recorded reply
/// compared with the new one, the peer requests it answered, and what never happened.
/// ``matches`` is the verdict `blipscope replay` turns into its exit status.
public struct ReplayReport: Sendable, Codable {
    /// One difference between a recorded and a new reply, at a path (see ``ReplyComparator``).
    public struct Difference: Sendable, Hashable, Codable {
        public var path: String
        public var old: String?
        public var new: String?
        /// The `--allow` entry that permits it; nil when it counts against the replay.
        public var allowedBy: String?

        public init(path: String, old: String?, new: String?, allowedBy: String?) {
            self.path = path
            self.old = old
            self.new = new
            self.allowedBy = allowedBy
        }
    }

    /// A request the replaying side sent, and how its reply compared.
    public struct Entry: Sendable, Codable {
        public var index: Int
        public var profile: String
        public var recordedNumber: UInt64
        /// `RPY`, `ERR <domain>/<code>`, `noreply`, or `none` (no reply).
        public var recordedStatus: String
        public var newStatus: String
        public var differences: [Difference]

        public var disallowed: Int { differences.filter { $0.allowedBy == nil }.count }
    }

    /// A request of the live peer that no recorded request matched, or that got a reused reply.
    public struct PeerRequestNote: Sendable, Codable {
        public var profile: String
        public var number: UInt64
        /// `unmatched` (answered with ERR BLIP/404) or `reused` (all recorded ones were used).
        public var outcome: String
        public var allowedBy: String?

        public init(profile: String, number: UInt64, outcome: String, allowedBy: String?) {
            self.profile = profile
            self.number = number
            self.outcome = outcome
            self.allowedBy = allowedBy
        }
    }

    public var side: ReplaySide
    public var session: Int
    public var timing: String
    public var subprotocol: String?
    public var requestsScripted: Int
    public var requestsSent = 0
    public var entries: [Entry] = []
    public var peerRequestsRecorded: Int
    public var peerRequestsReceived = 0
    public var peerRequestsMatchedExactly = 0
    public var peerRequestNotes: [PeerRequestNote] = []
    /// Replies to peer requests that waited, as in the recording, for own requests sent after
    /// the request arrived and for their replies (see ``PeerReplyGate``).
    public var peerRepliesHeld = 0
    /// Set when the replay ended before the script did (stall, peer closed, timeout).
    public var endedEarly: String?
    /// The close code the peer sent, when it closed.
    public var peerCloseCode: Int?
    public var captureProblems: [String] = []

    public init(side: ReplaySide, session: Int, timing: String, requestsScripted: Int, peerRequestsRecorded: Int) {
        self.side = side
        self.session = session
        self.timing = timing
        self.requestsScripted = requestsScripted
        self.peerRequestsRecorded = peerRequestsRecorded
    }

    /// Differences no allowance covers, unmatched peer requests not allowed, and a replay cut short.
    public var disallowedCount: Int {
        entries.reduce(0) { $0 + $1.disallowed }
            + peerRequestNotes.filter { $0.allowedBy == nil && $0.outcome == "unmatched" }.count
            + (endedEarly == nil ? 0 : 1)
    }

    public var matches: Bool { disallowedCount == 0 }
}
