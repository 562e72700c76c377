import BLIPCore

/// Which messages a viewer wants, from the query of `/api/sessions/{id}/messages`:
/// `profile=`, `dir=` (`c2s` or `s2c`), `type=` (`MSG`, `RPY`, `ERR`), `error=1`, `doc=` (a document
/// ID the message names) and `q=` (free text, case-insensitive, in the summary, the profile and the
/// redacted properties: a secret's value can never be found by searching for it).
public struct MessageFilter: Sendable, Equatable {
    public var profile: String?
    public var direction: BLIPDirection?
    public var type: MessageType?
    public var errorsOnly = false
    public var docID: String?
    public var text: String?

    public init() {}

    public init(query: [String: String]) {
        profile = query["profile"].flatMap { $0.isEmpty ? nil : $0 }
        switch query["dir"] {
        case "c2s", "C→U", "C→S": direction = .clientToServer
        case "s2c", "U→C", "S→C": direction = .serverToClient
        default: direction = nil
        }
        type = query["type"].flatMap { name in MessageType.allCases.first { "\($0)" == name.uppercased() } }
        errorsOnly = query["error"] == "1" || query["error"] == "true"
        docID = query["doc"].flatMap { $0.isEmpty ? nil : $0 }
        text = query["q"].flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    public var isEmpty: Bool { self == MessageFilter() }

    public func matches(_ record: MessageRecord) -> Bool {
        if let profile, record.profile != profile { return false }
        if let direction, record.direction != direction { return false }
        if let type, record.type != type { return false }
        if errorsOnly, !record.isError, record.analysis?.findings.isEmpty ?? true { return false }
        if let docID, !record.documentIDs().contains(docID) { return false }
        if let text {
            if record.summary.lowercased().contains(text) { return true }
            if let profile = record.profile, profile.lowercased().contains(text) { return true }
            let properties = record.redactedProperties ?? []
            return properties.contains { $0.key.lowercased().contains(text) || $0.value.lowercased().contains(text) }
        }
        return true
    }
}
