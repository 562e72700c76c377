import BLIPCore
import Metrics
import NIOConcurrencyHelpers
import Replication

/// What the admin listener knows about one live session: who, counters each way, the session's
/// own ``SessionAnalyzer`` and its recent messages. Written on the session's event loop, read by
/// the admin listener: the session counts into a table of its own, without a lock, and publishes
/// it into the one the admin reads once per input of the session (``publish()``, one uncontended
/// lock), so what the admin shows is at most one read batch behind.
///
/// `@unchecked Sendable`: ``unpublished`` is touched only on the session's event loop.
final class SessionTrack: @unchecked Sendable {
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
    /// Counted since the last ``publish()``; its `recent` holds at most ``recentCapacity``.
    private var unpublished = Counts()

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
        unpublished.bytes[direction] += wireBytes
    }

    /// Counts a complete message of `wireBytes` payload bytes and keeps it among the recent ones
    /// (published at the input's end, or at once when a whole ring of them waits).
    func countMessage(wireBytes: Int, _ recent: Recent) {
        unpublished.bytes[recent.direction.rawValue] += wireBytes
        unpublished.messages[recent.direction.rawValue] += 1
        unpublished.recent.append(recent)
        if unpublished.recent.count >= Self.recentCapacity { publish() }
    }

    /// Moves what was counted since the last time into the table the admin reads: one lock.
    func publish() {
        // Bytes count every message and undecoded frame: none means nothing waits.
        guard unpublished.bytes[0] != 0 || unpublished.bytes[1] != 0 || !unpublished.recent.isEmpty else { return }
        counts.withLockedValue { counts in
            for direction in 0..<2 {
                counts.bytes[direction] += unpublished.bytes[direction]
                counts.messages[direction] += unpublished.messages[direction]
            }
            for recent in unpublished.recent {
                if counts.recent.count < Self.recentCapacity {
                    counts.recent.append(recent)
                } else {
                    counts.recent[counts.recentNext] = recent
                }
                counts.recentNext = (counts.recentNext + 1) % Self.recentCapacity
            }
        }
        unpublished.bytes = [0, 0]
        unpublished.messages = [0, 0]
        unpublished.recent.removeAll(keepingCapacity: true)
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
