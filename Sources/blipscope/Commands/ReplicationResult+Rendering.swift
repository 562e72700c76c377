import Gateway
import Replication

/// How `blipscope replicate` prints a ``ReplicationResult``: a few aligned lines for people, or
/// one JSON object (keys sorted) for scripts.
extension ReplicationResult {
    func rendered(url: String, direction: String, localDocuments: Int) -> String {
        var lines = ["replicated \(url) (\(direction)) over \(subprotocol ?? "no sub-protocol")"]
        lines.append("  pulled     \(pulledRevisions) revisions, \(pulledAttachments) attachments")
        lines.append("  pushed     \(pushedRevisions) revisions, \(pushedAttachments) attachments")
        lines.append("  skipped    \(skippedRevisions) revisions already known or not wanted")
        lines.append("  conflicts  \(conflicts.isEmpty ? "none" : String(conflicts.count))")
        lines += conflicts.map { "    \($0)" }
        lines.append("  errors     \(documentErrors.isEmpty ? "none" : String(documentErrors.count))")
        lines += documentErrors.map { "    \($0)" }
        lines.append("  local database now holds \(localDocuments) documents")
        return lines.joined(separator: "\n")
    }

    func json(url: String, direction: String, localDocuments: Int) -> String {
        let value = JSONValue.object([
            "url": .string(url),
            "direction": .string(direction),
            "subprotocol": subprotocol.map(JSONValue.string) ?? .null,
            "pulledRevisions": .number(String(pulledRevisions)),
            "pulledAttachments": .number(String(pulledAttachments)),
            "pushedRevisions": .number(String(pushedRevisions)),
            "pushedAttachments": .number(String(pushedAttachments)),
            "skippedRevisions": .number(String(skippedRevisions)),
            "conflicts": .array(conflicts.map { conflict in
                .object(["docID": .string(conflict.docID), "revID": .string(conflict.revID),
                         "side": .string(conflict.side.rawValue), "reason": .string(conflict.reason)])
            }),
            "documentErrors": .array(documentErrors.map { error in
                .object(["docID": .string(error.docID), "revID": .string(error.revID),
                         "status": .number(String(error.status)), "reason": .string(error.reason)])
            }),
            "localDocuments": .number(String(localDocuments)),
        ])
        return value.description
    }
}
