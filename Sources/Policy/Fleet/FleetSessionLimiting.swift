/// The fleet's session leases (the FleetLimits module): the relay asks once per handshake that
/// matched a fleet `maxSessions` rule, and releases at the session's end. Never waits longer
/// than its Redis timeout; without Redis it decides from a local share of each limit.
public protocol FleetSessionLimiting: Sendable {
    /// Takes a lease in every claim's count for `session`, or none: the first claim whose
    /// count is full is the refusal (its leases taken so far are given back).
    func open(_ claims: [FleetSessionClaim], session: UInt64) async -> ConnectionRefusal?
    /// Gives back the leases ``open(_:session:)`` took for `session`.
    func close(_ claims: [FleetSessionClaim], session: UInt64)
}
