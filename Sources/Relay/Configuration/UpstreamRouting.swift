/// Which Sync Gateway nodes serve a database (wire-format reference §1: the path is
/// `/{db}/_blipsync`): one list for every database, or a list by database name. Each list holds
/// one node or several; the relay spreads new sessions over a list's healthy nodes
/// (``UpstreamPool``) and passes over one that refuses or cannot be reached.
public struct UpstreamRouting: Sendable, Equatable {
    /// Used for databases not in ``perDatabaseNodes``; empty refuses them with 404.
    public var defaultNodes: [UpstreamURL]
    /// Database name → its nodes (never an empty list).
    public var perDatabaseNodes: [String: [UpstreamURL]]

    public init(defaultNodes: [UpstreamURL], perDatabaseNodes: [String: [UpstreamURL]] = [:]) {
        self.defaultNodes = defaultNodes
        self.perDatabaseNodes = perDatabaseNodes.filter { !$0.value.isEmpty }
    }

    /// One upstream per route.
    public init(default defaultUpstream: UpstreamURL?, perDatabase: [String: UpstreamURL] = [:]) {
        self.init(defaultNodes: defaultUpstream.map { [$0] } ?? [], perDatabaseNodes: perDatabase.mapValues { [$0] })
    }

    /// One upstream for every database.
    public static func single(_ url: UpstreamURL) -> UpstreamRouting { UpstreamRouting(default: url) }

    /// The first of the default nodes.
    public var defaultUpstream: UpstreamURL? { defaultNodes.first }

    /// The route a database's sessions take and its nodes; nil when no route serves it.
    public func route(for database: String) -> (route: UpstreamRoute, nodes: [UpstreamURL])? {
        if let nodes = perDatabaseNodes[database] { return (.database(database), nodes) }
        return defaultNodes.isEmpty ? nil : (.fallback, defaultNodes)
    }

    /// Every route with its nodes, the default first, then by database name.
    public var routes: [(route: UpstreamRoute, nodes: [UpstreamURL])] {
        (defaultNodes.isEmpty ? [] : [(UpstreamRoute.fallback, defaultNodes)])
            + perDatabaseNodes.sorted { $0.key < $1.key }.map { (.database($0.key), $0.value) }
    }

    /// Whether any database goes to a `wss://` upstream (the relay then needs a TLS client context).
    public var anySecure: Bool { defaultNodes.contains { $0.secure } || perDatabaseNodes.values.joined().contains { $0.secure } }
}
