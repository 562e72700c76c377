import BLIPCore

/// A timeline event as ``DocumentTimelines`` stores it: what ``TimelineEvent`` holds minus
/// what the session or the document already says (connection, document ID), optional numbers
/// as sentinels, and the note unformatted. About half a `TimelineEvent`'s size, and built
/// without formatting a string.
struct TimelineRecord: Sendable {
    var time: Double
    var number: MessageNumber
    var revID: String?
    var sequence: JSONValue?
    var note: TimelineNote?
    /// NaN when unknown.
    var latency: Double = .nan
    /// Negative when unknown.
    var bytes: Int = -1
    /// Negative when unknown.
    var historyCount: Int32 = -1
    /// Negative when unknown.
    var attachmentCount: Int32 = -1
    var kind: TimelineEvent.Kind
    var from: BLIPDirection
    var type: MessageType
    /// The request's profile (nil shows as `?`).
    var profile: ReplicationProfile?
    var deleted = false
    /// The `collection` index of the message (a reply: its request's); negative when none.
    var collection: Int32 = -1

    init(time: Double, from: BLIPDirection, type: MessageType, number: MessageNumber, profile: ReplicationProfile?,
         kind: TimelineEvent.Kind, revID: String? = nil) {
        self.time = time
        self.from = from
        self.type = type
        self.number = number
        self.profile = profile
        self.kind = kind
        self.revID = revID
    }

    /// Sets an optional byte count (nil leaves it unknown).
    mutating func setBytes(_ value: Int?) { bytes = value ?? -1 }

    /// The public form, for a document of session `connection` whose getCollections named
    /// `collections`.
    func event(connection: Int, docID: String, collections: [CollectionPath] = []) -> TimelineEvent {
        var event = TimelineEvent(connection: connection, time: time, from: from, type: type, number: number,
                                  profile: profile?.rawValue ?? "?", docID: docID, kind: kind, revID: revID)
        event.sequence = sequence
        event.note = note?.text
        event.bytes = bytes < 0 ? nil : bytes
        event.historyCount = historyCount < 0 ? nil : Int(historyCount)
        event.attachmentCount = attachmentCount < 0 ? nil : Int(attachmentCount)
        event.deleted = deleted
        if collection >= 0 {
            event.collection = Int(collection) < collections.count ? collections[Int(collection)].description : "#\(collection)"
        }
        event.latency = latency.isNaN ? nil : latency
        return event
    }
}
