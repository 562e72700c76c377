import BLIPCore

extension ReplicationMessage {
    /// One line in protocol terms, e.g. `changes 12 revs seq 100…112`, and for a reply the
    /// request's line then the outcome: `changes 12 revs seq 100…112 → wants 10`.
    ///
    /// Built for every message the relay logs, so written by one ``LineWriter``, straight from
    /// the message's fields (the request's read in its box); only known profiles' pieces are
    /// made as strings first.
    public var summary: String {
        if let whole = wholeSummary { return whole }
        // Written into a stack buffer first; a longer line is written again into its String.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: LineWriter.stackCapacity) { buffer in
            let length = writeSummary(into: buffer)
            guard length > buffer.count else { return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<length]), as: UTF8.self) }
            return String(unsafeUninitializedCapacity: length) { writeSummary(into: $0) }
        }
    }

    /// Writes the UTF-8 bytes of ``summary`` at the start of `buffer` when they fit, and returns
    /// their length either way: past `buffer.count` nothing usable was written, and a second call
    /// with that much room writes them (the relay writes summaries straight into its log line).
    /// They are valid UTF-8: the line is written from whole strings and from ASCII cut anywhere
    /// (hex digests, base64 source IDs, digits), never from a string cut inside a character.
    public borrowing func writeSummary(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        if var whole = wholeSummary {
            return whole.withUTF8 { bytes in
                if bytes.count <= buffer.count, bytes.count > 0, let source = bytes.baseAddress {
                    buffer.baseAddress!.update(from: source, count: bytes.count)
                }
                return bytes.count
            }
        }
        var line = LineWriter(into: buffer)
        appendSummary(to: &line)
        return line.length
    }

    /// The line when it is a known request's text alone (no collection), else nil.
    private var wholeSummary: String? {
        guard type == .request, collectionName == nil else { return nil }
        if case .generic = content { return nil }
        return requestSummary
    }

    /// `[collection] head → outcome`: the head is the request's line, the outcome a reply's.
    private borrowing func appendSummary(to line: inout LineWriter) {
        if let collectionName {
            line.append("[")
            line.append(collectionName)
            line.append("] ")
        }
        guard type != .request else { return appendRequestPiece(to: &line) }
        if let requestBox {
            requestBox.withMessage { $0.appendRequestPiece(to: &line) }
        } else {
            line.append(profile ?? "reply")
            line.append(" #")
            line.append(decimal: number)
        }
        line.append(" → ")
        appendReplyPiece(to: &line)
    }

    /// An unknown profile's line, `echo (300 B)`; a known one's ``requestSummary``.
    private borrowing func appendRequestPiece(to line: inout LineWriter) {
        guard case .generic(let generic) = content else { return line.append(requestSummary) }
        line.append(profile ?? "(no profile)")
        line.append(" (")
        line.append(byteCount: generic.bodyBytes)
        line.append(")")
    }

    /// A reply to an unknown profile, `(300 B)`; to a known one, ``replySummary``.
    private borrowing func appendReplyPiece(to line: inout LineWriter) {
        guard case .generic(let generic) = content else { return line.append(replySummary) }
        line.append("(")
        line.append(byteCount: generic.bodyBytes)
        line.append(")")
    }

    var requestSummary: String {
        switch content {
        case .getCheckpoint(let request):
            return "getCheckpoint client=\(request.client ?? "?")"
        case .setCheckpoint(let request):
            return "setCheckpoint client=\(request.client ?? "?") \(SetCheckpointRequest.revText(request.rev))"
        case .getCollections(let request):
            return "getCollections \(request.collections.map(\.description).joined(separator: ", "))"
        case .subChanges(let request):
            return Self.subChangesSummary(request)
        case .unsubChanges:
            return ReplicationProfile.unsubChanges.rawValue
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
            return ReplicationProfile.ping.rawValue
        case .generic:
            return LineWriter.text { appendRequestPiece(to: &$0) }
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
        case .generic:
            return LineWriter.text { appendReplyPiece(to: &$0) }
        default:
            return "ok"
        }
    }

    private static func subChangesSummary(_ request: SubChangesRequest) -> String {
        var parts = [ReplicationProfile.subChanges.rawValue]
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
        let docID = rev.docID ?? "?"
        let revID = RevID.abbreviate(rev.revID ?? "?")
        let replaced = rev.replacedRev.map(RevID.abbreviate)
        return LineWriter.text { line in
            line.append(rev.profile)
            line.append(" ")
            line.append(docID)
            line.append(" ")
            line.append(revID)
            line.append(" (")
            line.append(byteCount: rev.bodyBytes)
            if rev.history != nil {
                line.append(", hist ")
                line.append(decimal: rev.historyCount)
            }
            if !rev.attachments.isEmpty {
                line.append(", ")
                line.append(decimal: rev.attachments.count)
                if rev.attachments.count == 1 { line.append(" attachment") } else { line.append(" attachments") }
            }
            if rev.deleted { line.append(", deleted") }
            if let replaced {
                line.append(", replaces ")
                line.append(replaced)
            }
            line.append(")")
        }
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
    static func format(_ bytes: Int) -> String {
        if bytes < 1000 {
            return LineWriter.text { line in
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
