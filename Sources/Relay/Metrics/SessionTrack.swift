import BLIPCore
import Metrics
import NIOConcurrencyHelpers
import Replication

/// What the admin listener knows about one live session: who, counters each way, the session's
/// own ``SessionAnalyzer`` and its recent messages. Written on the session's event loop, read by
/// the admin listener; one uncontended lock guards the counters.
final class SessionTrack: Sendable {
    /// One entry of the recent-message ring.
    struct Recent: Sendable {
        var time: Double
        var direction: BLIPDirection
        var type: MessageType
        var number: MessageNumber
        var profile: String?
        var bytes: Int
        var latency: Double?
    }

    struct Counts: Sendable {
        var messages = [0, 0]
        var bytes = [0, 0]
        var recent: [Recent] = []
        var recentNext = 0
    }

    let info: SessionInfo
    let started: Double
    let startedWallClock: Double
    let analyzer: SessionAnalyzer
    /// Cached labelled metrics of this session (looked up once at open).
    let active: Meter
    let userMessages: [Counter]?
    let userBytes: [Counter]?
    private let counts = NIOLockedValueBox(Counts())

    static let recentCapacity = 100

    init(info: SessionInfo, started: Double, wallClock: Double, analyzer: SessionAnalyzer, active: Meter,
         userMessages: [Counter]?, userBytes: [Counter]?) {
        self.info = info
        self.started = started
        self.startedWallClock = wallClock
        self.analyzer = analyzer
        self.active = active
        self.userMessages = userMessages
        self.userBytes = userBytes
    }

    func countFrame(direction: Int, wireBytes: Int) {
        counts.withLockedValue { $0.bytes[direction] += wireBytes }
    }

    /// Counts a complete message of `wireBytes` payload bytes and keeps it among the recent ones:
    /// one lock per message.
    func countMessage(wireBytes: Int, _ recent: Recent) {
        counts.withLockedValue { counts in
            counts.bytes[recent.direction.rawValue] += wireBytes
            counts.messages[recent.direction.rawValue] += 1
            if counts.recent.count < Self.recentCapacity {
                counts.recent.append(recent)
            } else {
                counts.recent[counts.recentNext] = recent
            }
            counts.recentNext = (counts.recentNext + 1) % Self.recentCapacity
        }
    }

    /// Messages and bytes each way, and the recent messages oldest first.
    func snapshot() -> (messages: [Int], bytes: [Int], recent: [Recent]) {
        counts.withLockedValue { counts in
            let ring = counts.recent
            let ordered = ring.count < Self.recentCapacity
                ? ring : Array(ring[counts.recentNext...] + ring[..<counts.recentNext])
            return (counts.messages, counts.bytes, ordered)
        }
    }
}
