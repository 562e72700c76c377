import BLIPCore
import ReplicationNames
/// One entry of the policy file's `rules:` list: a name, what it matches and what it does.
public struct MessageRule: Sendable {
    /// Profiles with which the client pushes (the `readOnly` shortcut denies these from the client).
    public static let pushProfiles = [ReplicationProfile.changes, .proposeChanges, .rev, .putRev].map(\.rawValue)

    public var name: String
    public var match: MessageMatch
    public var action: PolicyAction
    /// Chance (0…1) that a matching message is acted on; 1 when not given.
    public var toxicity: Double
    /// Act on at most this many messages (counted across sessions, kept over reloads); nil: no limit.
    public var limit: Int?
    /// Log what the rule would do, do nothing.
    public var dryRun: Bool

    /// True when the rule can only be decided once the message is complete.
    public var needsBody: Bool {
        if match.needsBody { return true }
        switch action {
        case .rateLimit(let limit): return limit.bytesPerSecond != nil
        case .close(let fault): return fault.afterBytes != nil
        default: return false
        }
    }
}

extension MessageRule {
    static let keys: Set<String> = ["name", "match", "action", "dryRun"]
    static let actionOptions: Set<String> = ["toxicity", "limit"]
    static let readOnlyMessage = "read-only: pushing is not allowed"

    /// Reads one rule; `location` names it in errors.
    init(parsing node: PolicyNode) throws(PolicyError) {
        let map = try node.mapping(allowed: Self.keys)
        name = try map.required("name").nonEmptyString()
        match = try map["match"].map { value throws(PolicyError) in try MessageMatch(parsing: value) } ?? MessageMatch()
        dryRun = try map["dryRun"]?.bool() ?? false
        let actionNode = try map.required("action")
        var readOnly: ErrorReply?
        if case .scalar = actionNode.node {
            guard try actionNode.string() == "readOnly" else {
                throw actionNode.fail("must be a mapping with one action, or readOnly")
            }
            readOnly = ErrorReply(message: Self.readOnlyMessage)
            toxicity = 1
            limit = nil
            action = .deny(readOnly!)
        } else {
            let actions = try actionNode.mapping(allowed: PolicyAction.names.union(Self.actionOptions))
            let chosen = actions.entries.filter { PolicyAction.names.contains($0.0) }
            guard chosen.count == 1, let (actionName, value) = chosen.first else {
                throw actionNode.fail(chosen.isEmpty ? "names no action (one of: \(PolicyAction.names.sorted().joined(separator: ", ")))"
                                                     : "names \(chosen.count) actions; a rule has exactly one")
            }
            toxicity = try actions["toxicity"]?.probability() ?? 1
            limit = try actions["limit"]?.integer(min: 1)
            if actionName == "readOnly" {
                readOnly = try ErrorReply(parsing: value, defaultCode: 403, defaultMessage: Self.readOnlyMessage)
                action = .deny(readOnly!)
            } else {
                action = try PolicyAction(name: actionName, parsing: value)
            }
        }
        if readOnly != nil { try restrictToPush(map["match"] ?? node) }
    }

    /// `readOnly`: the rule applies to the client's push requests (within whatever else it matches).
    private mutating func restrictToPush(_ node: PolicyNode) throws(PolicyError) {
        if match.direction == .serverToClient { throw node.fail("readOnly denies the client's push; from must be client") }
        match.direction = .clientToServer
        let profiles = match.profiles.map { $0.filter(Self.pushProfiles.contains) } ?? Self.pushProfiles
        guard !profiles.isEmpty else { throw node.fail("readOnly applies to \(Self.pushProfiles.joined(separator: ", ")); the profile given is none of them") }
        match.profiles = profiles
        if match.types == nil { match.types = [.request] }
    }
}
