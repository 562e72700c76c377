/// proposeChanges: `[docID, revID, serverRevID?, bodySize?]` entries sent to a conflict-free
/// peer (replication-protocol §3 "proposeChanges"); in a version-vector session `revID` may be a
/// whole vector, whose current version the entry is then known by.
public struct ProposeChangesRequest: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var docID: String
        /// The revision ID, or for a version vector its current version (what the rev will carry).
        public var revID: String
        /// The last revision the sender knows the peer has; nil when none (absent or "").
        public var serverRevID: String?
        public var bodySize: Int?
        /// The whole version vector when the entry carried one: LiteCore 4 proposes
        /// `[docID, "cv; pv…", serverVersion?, bodySize?]` (docs/litecore-behaviour.md).
        public var vector: String?

        public init(docID: String, revID: String, serverRevID: String? = nil, bodySize: Int? = nil) {
            self.docID = docID
            let named = VersionVector.currentVersionText(of: revID)
            self.revID = named ?? revID
            self.vector = named == nil ? nil : revID
            self.serverRevID = serverRevID.map { VersionVector.currentVersionText(of: $0) ?? $0 }
            self.bodySize = bodySize
        }
    }

    public var collection: Int?
    public var entries: [Entry] = []

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        if reader.bodyIsScannable, let scanned = Self.scanEntries(reader.body) {
            entries = scanned
            for entry in entries {
                _ = reader.checkRevID(entry.vector ?? entry.revID)
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

/// proposeChanges' reply: an answer per entry (§3 "proposeChanges", Response): 0 (or `null`)
/// send it, 304 already known, 409 conflict, or another HTTP-like status; trailing zeros may be
/// omitted. A peer asked for `conflictIncludesRev` (LiteCore 3.1 asks) answers a conflict with an
/// object instead of a bare number, `{"status":409,"rev":"2-…"}`, naming the revision it has
/// (docs/litecore-behaviour.md "Push").
public struct ProposeChangesReply: Sendable, Equatable {
    /// One entry's answer.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        /// The peer's current revision of the document, when the answer named it (object form).
        public var serverRevID: String?

        public init(status: Int, serverRevID: String? = nil) {
            self.status = status
            self.serverRevID = serverRevID
        }

        /// An omitted trailing answer: "send it".
        public static let send = Answer(status: 0)
    }

    public var answers: [Answer] = []

    /// The statuses alone, in entry order.
    public var statuses: [Int] { answers.map(\.status) }

    /// The answer to entry `index`; omitted trailing items mean 0 ("send it").
    public func answer(at index: Int) -> Answer { index < answers.count ? answers[index] : .send }

    /// The status of entry `index`; omitted trailing items mean 0 ("send it").
    public func status(at index: Int) -> Int { answer(at: index).status }

    init(reading reader: inout MessageReader, requested: Int?) {
        if reader.bodyIsScannable, let scanned = Self.scanStatuses(reader.body) {
            answers = scanned.map { Answer(status: $0) }
            if let requested, answers.count > requested {
                reader.report(.replyCountMismatch(ReplicationProfile.proposeChanges.rawValue, entries: requested, answers: answers.count))
            }
            return
        }
        guard let body = reader.jsonBody(required: false) else { return }
        guard let items = body.arrayValue else {
            reader.report(.wrongShape("proposeChanges reply", expected: "a JSON array of status codes"))
            return
        }
        answers.reserveCapacity(items.count)
        for item in items {
            guard let answer = Self.answer(item) else {
                reader.report(.wrongShape("proposeChanges status \(item.description.prefix(40))",
                                          expected: "a status number or {\"status\": number, \"rev\": revID}"))
                answers.append(.send)
                continue
            }
            if let revID = answer.serverRevID { _ = reader.checkRevID(revID) }
            answers.append(answer)
        }
        if let requested, items.count > requested {
            reader.report(.replyCountMismatch(ReplicationProfile.proposeChanges.rawValue, entries: requested, answers: items.count))
        }
    }

    /// A bare non-negative status, `null` ("send it", as 0), or the object form
    /// `{"status": 409, "rev": "2-…"}` (`rev` optional, empty taken as absent); nil for anything else.
    private static func answer(_ item: JSONValue) -> Answer? {
        if item.isNull { return .send }
        if let code = item.intValue { return code >= 0 ? Answer(status: code) : nil }
        guard let object = item.objectValue, let code = object["status"]?.intValue, code >= 0 else { return nil }
        let rev = object[PropertyName.rev.rawValue]
        guard rev == nil || rev == .null || rev?.stringValue != nil else { return nil }
        let revID = rev?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return Answer(status: code, serverRevID: revID)
    }
}
