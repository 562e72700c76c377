/// The relay's allowances of `scope: fleet` rate limits (the FleetLimits module). Called per
/// message under the policy's lock: it must answer from memory at once, never wait on Redis.
public protocol FleetRateLimiting: Sendable {
    func spend(_ spend: FleetSpend, now: UInt64) -> FleetSpendResult
}
