/// proposeChanges: `[docID, revID, serverRevID?, bodySize?]` entries sent to a conflict-free
/// peer (replication-protocol §3 "proposeChanges").
public struct ProposeChangesRequest: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var docID: String
        public var revID: String
        /// The last revision the sender knows the peer has; nil when none (absent or "").
        public var serverRevID: String?
        public var bodySize: Int?
    }

    public var collection: Int?
    public var entries: [Entry] = []

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        if reader.bodyIsScannable, let scanned = Self.scanEntries(reader.body) {
            entries = scanned
            for entry in entries {
                _ = reader.checkRevID(entry.revID)
                if let serverRevID = entry.serverRevID { _ = reader.checkRevID(serverRevID) }
            }
            return
        }
        guard let body = reader.jsonBody() else { return }
        guard let items = body.arrayValue, items.count <= ChangesRequest.maxEntries else {
            reader.report(.wrongShape("proposeChanges body", expected: "a JSON array of at most \(ChangesRequest.maxEntries) entries"))
            return
        }
        entries.reserveCapacity(items.count)
        for item in items {
            guard let fields = item.arrayValue, (2...4).contains(fields.count),
                  let docID = fields[0].stringValue, let revID = fields[1].stringValue else {
                reader.report(.wrongShape("proposeChanges entry \(item.description.prefix(80))",
                                          expected: "[docID, revID, serverRevID?, bodySize?]"))
                continue
            }
            _ = reader.checkRevID(revID)
            var serverRevID: String?
            if fields.count >= 3 {
                guard let text = fields[2].stringValue else {
                    reader.report(.wrongShape("proposeChanges serverRevID \(fields[2])", expected: "a string"))
                    continue
                }
                if !text.isEmpty { _ = reader.checkRevID(text); serverRevID = text }
            }
            var bodySize: Int?
            if fields.count == 4 {
                bodySize = fields[3].intValue
                if bodySize == nil || bodySize! < 0 {
                    reader.report(.wrongShape("proposeChanges body size \(fields[3])", expected: "a non-negative integer"))
                    bodySize = nil
                }
            }
            entries.append(Entry(docID: docID, revID: revID, serverRevID: serverRevID, bodySize: bodySize))
        }
    }
}

/// proposeChanges' reply: a status per entry: 0 send it, 304 already known, 409 conflict, or
/// another HTTP-like status; trailing zeros may be omitted (§3 "proposeChanges", Response).
public struct ProposeChangesReply: Sendable, Equatable {
    public var statuses: [Int] = []

    /// The status of entry `index`; omitted trailing items mean 0 ("send it").
    public func status(at index: Int) -> Int { index < statuses.count ? statuses[index] : 0 }

    init(reading reader: inout MessageReader, requested: Int?) {
        if reader.bodyIsScannable, let scanned = Self.scanStatuses(reader.body) {
            statuses = scanned
            if let requested, statuses.count > requested {
                reader.report(.replyCountMismatch("proposeChanges", entries: requested, answers: statuses.count))
            }
            return
        }
        guard let body = reader.jsonBody(required: false) else { return }
        guard let items = body.arrayValue else {
            reader.report(.wrongShape("proposeChanges reply", expected: "a JSON array of status codes"))
            return
        }
        for item in items {
            guard let code = item.intValue, code >= 0 else {
                reader.report(.wrongShape("proposeChanges status \(item.description.prefix(40))", expected: "a status number"))
                statuses.append(0)
                continue
            }
            statuses.append(code)
        }
        if let requested, items.count > requested {
            reader.report(.replyCountMismatch("proposeChanges", entries: requested, answers: items.count))
        }
    }
}
