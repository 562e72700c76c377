/// changes: a batch of `[sequence, docID, revID, deleted?, bodySize?]` entries; an empty batch
/// means the sender has caught up (replication-protocol §3 "changes"). Sync Gateway sends its
/// caught-up batch as the JSON `null` (it sends a nil batch), which means the same
/// (docs/sync-gateway-behaviour.md). The fourth element is `true`/`false`, or on CBMobile_3
/// and later an integer of flags: 1 deleted, 2 revoked (the user lost access), 4 removed (the
/// document left the user's channels). In a version-vector
/// session `revID` is a current version, or (from LiteCore 4) a whole vector.
public struct ChangesRequest: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// Opaque; any JSON type (§3).
        public var sequence: JSONValue
        public var docID: String
        /// The revision ID, or for a version vector its current version (what the rev will carry).
        public var revID: String
        public var deleted: Bool
        /// Flag 2: the receiver's user lost access to the document (Sync Gateway's revocation).
        public var revoked = false
        /// Flag 4: the document left all of the receiver's user's channels.
        public var removed = false
        /// Approximate body size, when the sender knows it.
        public var bodySize: Int?
        /// The whole version vector when the entry carried one (LiteCore 4 pushing with `changes`).
        public var vector: String?

        init(sequence: JSONValue, docID: String, revID: String, deleted: Bool, bodySize: Int?) {
            self.init(sequence: sequence, docID: docID, revID: revID, flags: deleted ? Self.deletedFlag : 0, bodySize: bodySize)
        }

        static let deletedFlag = 1, revokedFlag = 2, removedFlag = 4

        /// `flags`: the fourth element as an integer (`true` is 1).
        init(sequence: JSONValue, docID: String, revID: String, flags: Int, bodySize: Int?) {
            let deleted = flags & Self.deletedFlag != 0
            self.revoked = flags & Self.revokedFlag != 0
            self.removed = flags & Self.removedFlag != 0
            self.sequence = sequence
            self.docID = docID
            let named = VersionVector.currentVersionText(of: revID)
            self.revID = named ?? revID
            self.vector = named == nil ? nil : revID
            self.bodySize = bodySize
            self.deleted = deleted
        }
    }

    public var collection: Int?
    public var entries: [Entry] = []

    /// True for the empty batch that signals "caught up".
    public var isCaughtUp: Bool { entries.isEmpty }

    /// Bodies with more entries than this are refused as absurd (a finding), not parsed.
    static let maxEntries = 100_000

    init(reading reader: inout MessageReader) {
        collection = reader.collection()
        if reader.bodyIsScannable, let scanned = Self.scanEntries(reader.body) {
            entries = scanned
            for entry in entries { _ = reader.checkRevID(entry.vector ?? entry.revID) }
            return
        }
        guard let body = reader.jsonBody() else { return }
        if body == .null { return }  // Sync Gateway's caught-up batch
        guard let items = body.arrayValue else {
            reader.report(.wrongShape("changes body", expected: "a JSON array of changes, or null"))
            return
        }
        guard items.count <= Self.maxEntries else {
            reader.report(.wrongShape("changes body of \(items.count) entries", expected: "at most \(Self.maxEntries)"))
            return
        }
        entries.reserveCapacity(items.count)
        for item in items {
            if let entry = Self.entry(item, reader: &reader) { entries.append(entry) }
        }
    }

    private static func entry(_ item: JSONValue, reader: inout MessageReader) -> Entry? {
        guard let fields = item.arrayValue, fields.count >= 3, fields.count <= 5,
              let docID = fields[1].stringValue, let revID = fields[2].stringValue else {
            reader.report(.wrongShape("changes entry \(item.description.prefix(80))",
                                      expected: "[sequence, docID, revID, deleted?, bodySize?]"))
            return nil
        }
        _ = reader.checkRevID(revID)
        var bodySize: Int?
        if fields.count == 5 {
            bodySize = fields[4].intValue
            if bodySize == nil || bodySize! < 0 {
                reader.report(.wrongShape("changes entry body size \(fields[4])", expected: "a non-negative integer"))
                bodySize = nil
            }
        }
        let bits = fields.count >= 4 ? Self.flags(fields[3]) : 0
        return Entry(sequence: fields[0], docID: docID, revID: revID, flags: bits, bodySize: bodySize)
    }

    /// The fourth element as flags: a bool is deleted or not; an integer is the bitfield.
    static func flags(_ value: JSONValue) -> Int {
        if case .number(let text) = value, let flags = Int(text), flags > 0 { return flags }
        return value.isTruthy ? Entry.deletedFlag : 0
    }
}

/// changes' reply: for each entry, the known ancestors of a wanted revision or 0/null for an
/// unwanted one; trailing unwanted items may be omitted. `maxHistory` caps rev histories
/// (§3 "changes", Response).
public struct ChangesReply: Sendable, Equatable {
    public enum Answer: Sendable, Equatable {
        case wanted(knownAncestors: [String])
        case notWanted
    }

    public var maxHistory: Int?
    public var answers: [Answer] = []

    /// The answer for entry `index`; omitted trailing items mean "not wanted".
    public func answer(at index: Int) -> Answer { index < answers.count ? answers[index] : .notWanted }

    public func wantedCount(of entries: Int) -> Int {
        (0..<entries).reduce(0) { count, index in answer(at: index) == .notWanted ? count : count + 1 }
    }

    init(reading reader: inout MessageReader, requested: Int?) {
        maxHistory = reader.int(.maxHistory)
        if reader.bodyIsScannable, let scanned = Self.scanAnswers(reader.body) {
            answers = scanned
            if let requested, answers.count > requested {
                reader.report(.replyCountMismatch(ReplicationProfile.changes.rawValue, entries: requested, answers: answers.count))
            }
            return
        }
        guard let body = reader.jsonBody(required: requested.map { $0 > 0 } ?? true) else { return }
        guard let items = body.arrayValue else {
            reader.report(.wrongShape("changes reply", expected: "a JSON array"))
            return
        }
        for item in items {
            switch item {
            case .null: answers.append(.notWanted)
            case .number where item.intValue == 0: answers.append(.notWanted)
            case .array(let ancestors):
                let ids = ancestors.compactMap(\.stringValue)
                if ids.count != ancestors.count {
                    reader.report(.wrongShape("changes reply item \(item)", expected: "an array of revision IDs"))
                }
                answers.append(.wanted(knownAncestors: ids))
            default:
                reader.report(.wrongShape("changes reply item \(item.description.prefix(60))",
                                          expected: "an array of revision IDs, 0 or null"))
                answers.append(.notWanted)
            }
        }
        if let requested, items.count > requested {
            reader.report(.replyCountMismatch(ReplicationProfile.changes.rawValue, entries: requested, answers: items.count))
        }
    }
}
