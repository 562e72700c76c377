/// Takes and keeps the readings of the relay process during a soak, and sweeps the capture
/// directory with each periodic one.
actor SoakSampler {
    private let probe: ProcessProbe
    private let progress: SoakProgress
    private let sweeper: CaptureSweeper
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private(set) var samples: [ResourceSample] = []

    init(probe: ProcessProbe, progress: SoakProgress, sweeper: CaptureSweeper) {
        self.probe = probe
        self.progress = progress
        self.sweeper = sweeper
        start = clock.now
    }

    var elapsedSeconds: Double {
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Reads RSS and descriptors now; nil when the relay process is gone.
    @discardableResult
    func take(_ moment: ResourceSample.Moment) -> ResourceSample? {
        guard let rss = probe.rssKiB(), let fds = probe.openDescriptors() else { return nil }
        let sample = ResourceSample(moment: moment, seconds: elapsedSeconds, echoed: progress.echoed, rssKiB: rss, fds: fds)
        samples.append(sample)
        return sample
    }

    func sweep(final: Bool = false) -> CaptureSweepCounts {
        sweeper.sweep(final: final)
        return sweeper.counts
    }
}
