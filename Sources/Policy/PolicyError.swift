/// The Policy module's one error: a policy file that cannot be read or does not validate.
///
/// Every validation error names where it is: the rule (by `name`, or by index when the rule has
/// no usable name) and the field path inside it, so a typo is found without guessing, e.g.
/// `rule "slow-revs": action.rateLimit.perSecond: must be a positive number`.
public struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        case unreadable(path: String, reason: String)
        case syntax(String)
        case invalid(location: String, field: String, problem: String)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// The file could not be opened or read.
    static func unreadable(_ path: String, _ reason: String) -> PolicyError {
        PolicyError(.unreadable(path: path, reason: reason))
    }

    /// The text is not YAML.
    static func syntax(_ message: String) -> PolicyError { PolicyError(.syntax(message)) }

    /// A field of a rule (or of the file, `location` "policy") is wrong.
    static func invalid(_ location: String, _ field: String, _ problem: String) -> PolicyError {
        PolicyError(.invalid(location: location, field: field, problem: problem))
    }

    /// The rule the error is in (`rule "name"`, `rule #3`, `connection rule "name"`), or `policy`
    /// for a top-level problem; nil when the file could not be read or parsed at all.
    public var location: String? {
        if case .invalid(let location, _, _) = kind { return location }
        return nil
    }

    /// The dotted field path inside the rule (`action.rateLimit.perSecond`), if any.
    public var field: String? {
        if case .invalid(_, let field, _) = kind { return field.isEmpty ? nil : field }
        return nil
    }

    public var description: String {
        switch kind {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .syntax(let message): return "not valid YAML: \(message)"
        case .invalid(let location, let field, let problem):
            return field.isEmpty ? "\(location): \(problem)" : "\(location): \(field): \(problem)"
        }
    }
}
