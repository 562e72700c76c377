import BLIPCore

/// How a replay runs: timing, what it substitutes, what may differ, and how long it waits.
/// A plain value with defaults.
public struct ReplayConfiguration: Sendable {
    public var timing: ReplayTiming = .dependencies
    public var substitutions = ReplaySubstitutions()
    public var allowances: ReplayAllowances
    /// A replay waiting this long with nothing arriving from the peer gives up and reports
    /// where it stood (the peer sent fewer requests or replies than recorded).
    public var stallTimeout: Duration = .seconds(10)
    public var limits = BLIPLimits.default

    public init(allowances: ReplayAllowances? = nil) {
        // The default names are known, so this cannot fail.
        self.allowances = allowances ?? (try! ReplayAllowances(ReplayAllowances.defaults))
    }
}
