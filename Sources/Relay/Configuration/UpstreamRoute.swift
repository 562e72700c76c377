/// A list of nodes sessions are spread over: the default one, or a database's own.
public enum UpstreamRoute: Sendable, Hashable, CustomStringConvertible {
    /// `--upstream`: every database without a route of its own.
    case fallback
    /// `--route DB=…`.
    case database(String)

    public var description: String {
        switch self {
        case .fallback: "default"
        case .database(let name): "database \(name)"
        }
    }
}
