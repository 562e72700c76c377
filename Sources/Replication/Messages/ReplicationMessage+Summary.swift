import BLIPCore

extension ReplicationMessage {
    /// One line in protocol terms, e.g. `changes 12 revs seq 100…112`, and for a reply the
    /// request's line then the outcome: `changes 12 revs seq 100…112 → wants 10`.
    ///
    /// Built for every message the relay logs: the pieces are joined by a ``LineWriter``, and
    /// the request's line is read in its box.
    public var summary: String {
        // Fields are read into locals first: a closure or `??` autoclosure that reads one
        // captures, and copies, the whole message.
        let head: String
        var outcome: String?
        if type == .request {
            head = requestSummary
        } else {
            if let requestBox {
                head = requestBox.withMessage { $0.requestSummary }
            } else {
                head = "\(profile ?? "reply") #\(number)"
            }
            outcome = replySummary
        }
        let collection = collectionName
        if collection == nil, outcome == nil { return head }
        let capacity = (collection?.utf8.count ?? 0) + head.utf8.count + (outcome?.utf8.count ?? 0) + 8
        return LineWriter.text(capacity: capacity) { line in
            if let collection {
                line.append("[")
                line.append(collection)
                line.append("] ")
            }
            line.append(head)
            if let outcome {
                line.append(" → ")
                line.append(outcome)
            }
        }
    }

    var requestSummary: String {
        switch content {
        case .getCheckpoint(let request):
            return "getCheckpoint client=\(request.client ?? "?")"
        case .setCheckpoint(let request):
            return "setCheckpoint client=\(request.client ?? "?") rev \(request.rev ?? "(new)")"
        case .getCollections(let request):
            return "getCollections \(request.collections.map(\.description).joined(separator: ", "))"
        case .subChanges(let request):
            return Self.subChangesSummary(request)
        case .unsubChanges:
            return "unsubChanges"
        case .changes(let request):
            return Self.changesSummary(request)
        case .proposeChanges(let request):
            return "proposeChanges \(request.entries.count)"
        case .rev(let rev):
            return Self.revSummary(rev)
        case .norev(let norev):
            let status = norev.error.map { " \($0)" } ?? ""
            let reason = norev.reason.map { " (\($0))" } ?? ""
            return "norev \(norev.docID ?? "?") \(RevID.abbreviate(norev.revID ?? "?"))\(status)\(reason)"
        case .getAttachment(let request):
            return "getAttachment \(Self.abbreviateDigest(request.digest))"
        case .proveAttachment(let request):
            return "proveAttachment \(Self.abbreviateDigest(request.digest)) (nonce \(request.nonceBytes) B)"
        case .getRev(let request):
            return "getRev \(request.docID ?? "?")" + (request.ifNotRev.map { " ifNotRev \(RevID.abbreviate($0))" } ?? "")
        case .ping:
            return "PING"
        case .generic(let generic):
            let name = profile ?? "(no profile)"
            return LineWriter.text(capacity: name.utf8.count + ByteCount.maxLength + 3) { line in
                line.append(name)
                line.append(" (")
                line.append(byteCount: generic.bodyBytes)
                line.append(")")
            }
        default:
            return "\(profile ?? "request") #\(number)"
        }
    }

    var replySummary: String {
        switch content {
        case .error(let error):
            return "ERR \(error.key)" + (error.message.isEmpty ? "" : ": \(error.message.prefix(80))")
        case .checkpoint(let checkpoint):
            return checkpoint.rev.map { "rev \($0)" } ?? "no checkpoint"
        case .setCheckpointReply(let reply):
            return reply.rev ?? "?"
        case .getCollectionsReply(let reply):
            var found = 0, none = 0, missing = 0
            for entry in reply.entries {
                switch entry {
                case .checkpoint: found += 1
                case .noCheckpoint: none += 1
                case .missingCollection: missing += 1
                }
            }
            return "\(found) checkpoint(s), \(none) new, \(missing) missing"
        case .changesReply(let reply):
            let entries: Int
            if case .changes(let request)? = requestBox?.message.content { entries = request.entries.count } else { entries = reply.answers.count }
            let history = reply.maxHistory.map { " (maxHistory \($0))" } ?? ""
            return "wants \(reply.wantedCount(of: entries))\(history)"
        case .proposeChangesReply(let reply):
            return Self.proposeOutcome(reply, request: requestBox?.message.content)
        case .attachment(let bytes):
            return ByteCount.format(bytes)
        case .proveAttachmentReply(let reply):
            return "proof \(reply.proof.prefix(12))…"
        case .getRevReply(let reply):
            return "\(RevID.abbreviate(reply.revID ?? "?")) (\(ByteCount.format(reply.bodyBytes)))"
                + (reply.deleted ? " deleted" : "")
        case .generic(let generic):
            return LineWriter.text(capacity: ByteCount.maxLength + 2) { line in
                line.append("(")
                line.append(byteCount: generic.bodyBytes)
                line.append(")")
            }
        default:
            return "ok"
        }
    }

    private static func subChangesSummary(_ request: SubChangesRequest) -> String {
        var parts = ["subChanges"]
        parts.append("since=\(request.since?.description ?? "start")")
        parts.append(request.continuous ? "continuous" : "one-shot")
        if let batch = request.batch { parts.append("batch=\(batch)") }
        if request.activeOnly { parts.append("activeOnly") }
        if let filter = request.filter { parts.append("filter=\(filter)") }
        if let channels = request.channels { parts.append("channels=\(channels.joined(separator: ","))") }
        if let versioning = request.versioning { parts.append(versioning.rawValue) }
        if let docIDs = request.docIDs { parts.append("docIDs=\(docIDs.count)") }
        if request.sendReplacementRevs { parts.append("sendReplacementRevs") }
        return parts.joined(separator: " ")
    }

    private static func changesSummary(_ request: ChangesRequest) -> String {
        guard let first = request.entries.first, let last = request.entries.last else {
            return "changes 0 revs (caught up)"
        }
        let sequences = request.entries.count == 1 ? "seq \(first.sequence)" : "seq \(first.sequence)…\(last.sequence)"
        let tombstones = request.entries.reduce(0) { $0 + ($1.deleted ? 1 : 0) }
        return "changes \(request.entries.count) revs \(sequences)" + (tombstones > 0 ? ", \(tombstones) deleted" : "")
    }

    private static func revSummary(_ rev: RevMessage) -> String {
        var details = [ByteCount.format(rev.bodyBytes)]
        if rev.history != nil { details.append("hist \(rev.historyCount)") }
        if !rev.attachments.isEmpty {
            details.append("\(rev.attachments.count) attachment" + (rev.attachments.count == 1 ? "" : "s"))
        }
        if rev.deleted { details.append("deleted") }
        if let replaced = rev.replacedRev { details.append("replaces \(RevID.abbreviate(replaced))") }
        return "\(rev.profile) \(rev.docID ?? "?") \(RevID.abbreviate(rev.revID ?? "?")) (\(details.joined(separator: ", ")))"
    }

    private static func proposeOutcome(_ reply: ProposeChangesReply, request: Content?) -> String {
        var count = reply.statuses.count
        if case .proposeChanges(let sent)? = request { count = max(count, sent.entries.count) }
        var tally: [Int: Int] = [:]
        for index in 0..<count { tally[reply.status(at: index), default: 0] += 1 }
        guard !tally.isEmpty else { return "nothing proposed" }
        return tally.keys.sorted().map { status in
            "\(tally[status]!)×" + (status == 0 ? "send" : String(status))
        }.joined(separator: " ")
    }

    static func abbreviateDigest(_ digest: String?) -> String {
        guard let digest else { return "?" }
        return digest.count > 14 ? digest.prefix(12) + "…" : digest
    }
}

/// Byte counts for people: `58 B`, `1.2 KB`, `3.4 MB` (decimal units).
enum ByteCount {
    /// The longest text ``format(_:)`` returns (`-9223372036854775808 B`).
    static let maxLength = 24

    static func format(_ bytes: Int) -> String {
        if bytes < 1000 {
            return LineWriter.text(capacity: maxLength) { line in
                line.append(decimal: bytes)
                line.append(" B")
            }
        }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let rounded = (value * 10).rounded() / 10
        let text = rounded == rounded.rounded() && rounded >= 100 ? String(Int(rounded)) : String(rounded)
        return "\(text) \(units[unit])"
    }
}
