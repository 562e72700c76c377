/// Where a limit's count is kept: in this relay (`local`, the default) or shared by every relay
/// of a fleet through Redis (`fleet`, the relay's `--redis`; docs/policy.md, docs/redis.md).
public enum LimitScope: String, Sendable, CaseIterable {
    case local, fleet
}

extension LimitScope {
    /// `scope: local|fleet`; `local` when the key is absent.
    init(parsing node: PolicyNode?) throws(PolicyError) {
        guard let node else {
            self = .local
            return
        }
        guard let scope = LimitScope(rawValue: try node.string()) else { throw node.fail("must be local or fleet") }
        self = scope
    }
}
