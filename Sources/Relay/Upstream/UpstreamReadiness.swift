/// Whether the upstream side lets the relay take sessions: at least one healthy node per route.
/// What the admin's `/readyz` consults.
public struct UpstreamReadiness: Sendable, Equatable {
    /// One sentence per route without a healthy node; empty when ready.
    public var reasons: [String]

    public var ready: Bool { reasons.isEmpty }
}
