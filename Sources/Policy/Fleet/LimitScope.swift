/// Where a limit's count is kept: in this relay (`local`, the default) or shared by every relay
/// of a fleet through Redis (`fleet`, the relay's `--redis`; docs/policy.md, docs/redis.md).
public enum LimitScope: String, Sendable, CaseIterable {
    case local, fleet
}

extension PolicyNode {
    /// `scope: local|fleet`; `local` when the key is absent.
    static func scope(_ node: PolicyNode?) throws(PolicyError) -> LimitScope {
        guard let node else { return .local }
        guard let scope = LimitScope(rawValue: try node.string()) else { throw node.fail("must be local or fleet") }
        return scope
    }
}
