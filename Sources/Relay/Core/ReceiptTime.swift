import Capture
import NIOCore

/// When the relay read a frame: on the monotonic clock (round trips, the session analyzer) and
/// on the wall clock (log lines, captures). Read once per socket read, so a frame whose
/// inspection waits (``RelayLimits/inspectionDelay``) is still reported at the time it passed.
public struct ReceiptTime: Sendable, Equatable {
    public var uptime: NIODeadline
    public var wall: CaptureTimestamp

    public init(uptime: NIODeadline, wall: CaptureTimestamp) {
        self.uptime = uptime
        self.wall = wall
    }

    public static func now() -> ReceiptTime { ReceiptTime(uptime: .now(), wall: .now()) }

    /// Seconds on the monotonic clock the session analyzers run on.
    var analyzerSeconds: Double { Self.analyzerSeconds(uptime) }

    /// Now, in seconds on the monotonic clock the session analyzers run on (for observers: the
    /// session core takes its time from its input).
    static func analyzerNow() -> Double { analyzerSeconds(.now()) }

    /// `uptime` in seconds, as the session analyzers count time.
    static func analyzerSeconds(_ uptime: NIODeadline) -> Double { Double(uptime.uptimeNanoseconds) / 1e9 }
}
