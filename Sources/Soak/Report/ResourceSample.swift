/// One reading of the relay process's memory and open file descriptors during a soak.
public struct ResourceSample: Sendable, Equatable, Codable {
    /// When in the run it was taken.
    public enum Moment: String, Sendable, Codable {
        /// Before the first session, the relay idle (after one metrics scrape).
        case baseline
        /// The first reading once the warm-up share of the messages was echoed, sessions running.
        case warmUp
        /// Every few seconds while sessions run.
        case periodic
        /// When the last session was started: every slot still busy, the message budget spent.
        case loadEnd
        /// After every session has closed and the relay reports none open.
        case idle
    }

    public var moment: Moment
    /// Seconds since the soak started.
    public var seconds: Double
    /// Numbered messages echoed so far.
    public var echoed: Int
    /// Resident memory (VmRSS), KiB.
    public var rssKiB: Int
    /// Open file descriptors (entries of /proc/PID/fd).
    public var fds: Int

    public init(moment: Moment, seconds: Double, echoed: Int, rssKiB: Int, fds: Int) {
        self.moment = moment
        self.seconds = seconds
        self.echoed = echoed
        self.rssKiB = rssKiB
        self.fds = fds
    }
}

/// The readings the verdict is about, picked from a run's samples.
public struct ResourceSeries: Sendable, Equatable, Codable {
    public var baseline: ResourceSample?
    /// RSS after warm-up, under load: what the end is compared with.
    public var first: ResourceSample?
    /// Under load at the end of the message budget.
    public var last: ResourceSample?
    /// Idle after the run.
    public var end: ResourceSample?
    public var peakRSSKiB: Int
    public var peakFDs: Int

    public init(_ samples: [ResourceSample]) {
        baseline = samples.first { $0.moment == .baseline }
        first = samples.first { $0.moment == .warmUp }
        last = samples.last { $0.moment == .loadEnd }
        end = samples.last { $0.moment == .idle }
        peakRSSKiB = samples.map(\.rssKiB).max() ?? 0
        peakFDs = samples.map(\.fds).max() ?? 0
    }

    /// `last` over `first`, minus one (0.04 is 4 % more); nil without both.
    public var rssGrowth: Double? {
        guard let first, let last, first.rssKiB > 0 else { return nil }
        return Double(last.rssKiB) / Double(first.rssKiB) - 1
    }
}
