import Foundation
import Yams

/// A parsed, validated policy file: message rules (checked per BLIP message) and connection
/// rules (checked per handshake). See docs/policy.md and `samples/policy.yaml`.
///
/// ```yaml
/// rules:                       # message rules, all checked for each message, in order
///   - name: no-drafts
///     match: { from: client, profile: rev, doc: "draft-*" }
///     action: { deny: { domain: HTTP, code: 403, message: "drafts stay on the device" } }
/// connections:
///   default: allow             # or deny: refuse handshakes no `allow` rule admitted
///   rules:                     # checked in order at each handshake; the first refusal wins
///     - name: tls-only
///       requireTLS: true
/// ```
///
/// Every mistake is an error naming the rule and field: unknown keys, wrong types, values out
/// of range, repeated rule names (per-rule state such as token buckets is kept by name).
public struct PolicyDocument: Sendable {
    public var rules: [MessageRule]
    public var connectionRules: [ConnectionRule]
    /// Whether a handshake no rule decided is admitted.
    public var connectionDefaultAllows: Bool

    public init(rules: [MessageRule] = [], connectionRules: [ConnectionRule] = [], connectionDefaultAllows: Bool = true) {
        self.rules = rules
        self.connectionRules = connectionRules
        self.connectionDefaultAllows = connectionDefaultAllows
    }

    /// Reads and validates a policy file.
    public init(contentsOf path: String) throws(PolicyError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .unreadable(path, (error as NSError).localizedDescription)
        }
        try self.init(yaml: String(decoding: data, as: UTF8.self))
    }

    /// The deepest a policy's collections may nest. A real policy needs about six levels; the
    /// bound keeps hostile nesting away from Yams' recursive composer (``YAMLNesting``).
    public static let maxNesting = 64

    /// Parses and validates policy YAML.
    public init(yaml: String) throws(PolicyError) {
        if YAMLNesting.exceeds(Self.maxNesting, in: yaml) {
            throw .invalid("policy", "", "collections nested more than \(Self.maxNesting) levels deep")
        }
        let root: Node?
        do { root = try Yams.compose(yaml: yaml) } catch { throw .syntax("\(error)") }
        self.init()
        guard let root else { return }  // an empty file is an empty policy
        let top = try PolicyNode(root, location: "policy").mapping(allowed: ["rules", "connections"])
        if let rules = top["rules"] {
            self.rules = try Self.list(rules, kind: "rule") { node throws(PolicyError) in try MessageRule(parsing: node) }
        }
        if let connections = top["connections"] {
            let map = try connections.mapping(allowed: ["default", "rules"])
            if let value = map["default"] {
                switch try value.string() {
                case "allow": connectionDefaultAllows = true
                case "deny": connectionDefaultAllows = false
                default: throw value.fail("must be allow or deny")
                }
            }
            if let rules = map["rules"] {
                connectionRules = try Self.list(rules, kind: "connection rule") { node throws(PolicyError) in
                    try ConnectionRule(parsing: node)
                }
            }
        }
    }

    /// Where the document asks for `scope: fleet` (to refuse it without a fleet): the first such
    /// rule and field, nil when every limit is local.
    public var firstFleetScope: (location: String, field: String)? {
        for rule in rules {
            if case .rateLimit(let limit) = rule.action, limit.scope == .fleet {
                return ("rule \"\(rule.name)\"", "action.rateLimit.scope")
            }
        }
        for rule in connectionRules {
            if case .maxSessions(let limits) = rule.action, limits.scope == .fleet {
                return ("connection rule \"\(rule.name)\"", "maxSessions.scope")
            }
        }
        return nil
    }

    /// Parses each item of a rule list with its location set to its name (or index), and
    /// rejects repeated names.
    private static func list<Rule>(_ node: PolicyNode, kind: String,
                                   parse: (PolicyNode) throws(PolicyError) -> Rule) throws(PolicyError) -> [Rule] {
        guard case .sequence(let sequence) = node.node else { throw node.fail("must be a list of rules") }
        var result: [Rule] = []
        var names: Set<String> = []
        for (index, item) in sequence.enumerated() {
            let name = item.mapping?["name"]?.scalar?.string
            let location = name.map { "\(kind) \"\($0)\"" } ?? "\(kind) #\(index + 1)"
            result.append(try parse(PolicyNode(item, location: location)))
            if let name, !names.insert(name).inserted {
                throw .invalid(location, "name", "another \(kind) has this name; names must be unique")
            }
        }
        return result
    }
}
