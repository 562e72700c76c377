/// The fleet limits' mode changed: the shell logs it once and sets the metric.
public enum FleetModeChange: Sendable, Equatable {
    /// Redis failed or was too slow: local limits of `limit ÷ liveRelays` from now on.
    case degraded(reason: String, liveRelays: Int)
    /// Redis answers again: shared limits from now on.
    case shared
}
