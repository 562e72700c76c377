/// subChanges: asks the peer to send changes after `since` (replication-protocol §3
/// "subChanges"; Connected Client §3.4 adds `since=NOW`).
public struct SubChangesRequest: Sendable, Equatable {
    public enum Since: Sendable, Equatable, CustomStringConvertible {
        /// A JSON-encoded sequence ID.
        case sequence(JSONValue)
        /// Only future changes (Connected Client).
        case now

        public var description: String {
            switch self {
            case .sequence(let value): return value.description
            case .now: return "NOW"
            }
        }
    }

    public var collection: Int?
    public var since: Since?
    public var continuous: Bool
    public var batch: Int?
    public var activeOnly: Bool
    public var filter: String?
    /// The `channels` parameter of the `sync_gateway/bychannel` filter, split at commas.
    public var channels: [String]?
    /// Named filter parameters: every property the spec does not define.
    public var filterParameters: [String: String] = [:]
    public var versioning: Versioning?
    public var docIDs: [String]?
    public var sendReplacementRevs: Bool

    static let definedProperties: Set<String> = Set([
        PropertyName.profile, .collection, .since, .continuous, .filter, .batch, .activeOnly, .versioning,
        .sendReplacementRevs, .channels,
    ].map(\.rawValue) + ["Content-Type", "Accept-Encoding"])

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        if reader.string(.since) == "NOW" {
            since = .now
        } else {
            since = reader.json(property: .since).map(Since.sequence)
        }
        continuous = reader.bool(.continuous)
        batch = reader.int(.batch)
        activeOnly = reader.bool(.activeOnly)
        filter = reader.string(.filter)
        channels = reader.string(.channels).map { $0.split(separator: ",").map { String($0.trimmingSpaces) } }
        if let value = reader.string(.versioning) {
            versioning = Versioning(rawValue: value)
            if versioning == nil {
                reader.report(.invalidProperty(ReplicationProfile.subChanges.rawValue, .versioning, value, expected: "rev-trees or version-vectors"))
            }
        }
        sendReplacementRevs = reader.bool(.sendReplacementRevs)
        for pair in reader.properties where !Self.definedProperties.contains(pair.key) {
            filterParameters[pair.key] = pair.value
        }
        readBody(&reader)
    }

    private mutating func readBody(_ reader: inout MessageReader) {
        guard let body = reader.jsonBody(required: false) else { return }
        guard let members = body.objectValue else {
            reader.report(.wrongShape("subChanges body", expected: "a JSON object"))
            return
        }
        if let ids = members["docIDs"] {
            let strings = ids.arrayValue?.compactMap(\.stringValue)
            if strings == nil || strings!.count != ids.arrayValue!.count {
                reader.report(.wrongShape("subChanges docIDs", expected: "an array of strings"))
            }
            docIDs = strings ?? []
        }
        if members["sendReplacementRevs"]?.isTruthy == true { sendReplacementRevs = true }
    }
}

/// unsubChanges: stop sending changes (Connected Client §3.5). No properties or body.
public struct UnsubChangesRequest: Sendable, Equatable {
    public var collection: Int?

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
    }
}
