/// One exported metric: what ``MetricCatalog`` says of it, in one place.
public struct MetricDefinition: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The series name, `blipscope_…`.
    public let name: String
    public let kind: Kind
    /// The label names every series of it carries, in order (a histogram adds `le`).
    public let labels: [String]
    /// Present only when the operator opts in (user names as labels).
    public let optIn: Bool
    /// The HELP line (`promtool check metrics` requires one).
    public let help: String

    public init(_ name: String, _ kind: Kind, labels: [String] = [], optIn: Bool = false, help: String) {
        self.name = name
        self.kind = kind
        self.labels = labels
        self.optIn = optIn
        self.help = help
    }

    public var description: String { name }
}
