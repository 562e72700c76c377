/// The fleet limits' state as the shell shows it.
public struct FleetSnapshot: Sendable, Equatable {
    public var degraded: Bool
    public var liveRelays: Int

    init(_ core: FleetLimiterCore) {
        degraded = core.degraded
        liveRelays = core.liveRelays
    }
}
