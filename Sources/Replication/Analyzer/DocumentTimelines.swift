import NIOCore

/// Per-document timelines with bounded memory: at most `maxTimelineDocuments` documents, each
/// with its latest `maxEventsPerDocument` events; documents idle longer than `timelineMaxAge`
/// and, beyond the count, the least recently active ones are evicted.
///
/// Each document gets a slot (its ID is hashed once per event, to find the slot); the
/// recency queue holds slot numbers, and an evicted document's slot, with its event storage,
/// is reused by the next new document, so steady traffic allocates little.
struct DocumentTimelines {
    private struct Slot {
        var docID: String
        var records: [TimelineRecord]
        /// The stamp of the document's latest event; 0 when the slot is free.
        var stamp: UInt64
    }

    private struct Touch {
        var slot: Int32
        var stamp: UInt64
        var time: Double
    }

    private let limits: AnalyzerLimits
    private var slotsByDocument: [String: Int32] = [:]
    private var slots: [Slot] = []
    private var freeSlots: [Int32] = []
    /// Every touch in order; entries whose stamp is no longer their slot's are stale.
    private var touches = CircularBuffer<Touch>()
    private var nextStamp: UInt64 = 0
    private(set) var evictedDocuments = 0
    private(set) var droppedEvents = 0

    init(limits: AnalyzerLimits) { self.limits = limits }

    var documentCount: Int { slotsByDocument.count }

    /// The events of `docID`, oldest first, as the public type of session `connection`; in a
    /// session with collections, the events of every collection's document of that ID, each
    /// naming its collection.
    func events(for docID: String, connection: Int, collections: [CollectionPath] = []) -> [TimelineEvent] {
        guard let slot = slotsByDocument[docID] else { return [] }
        return slots[Int(slot)].records.map { $0.event(connection: connection, docID: docID, collections: collections) }
    }

    var documentIDs: [String] { Array(slotsByDocument.keys) }

    mutating func append(_ record: TimelineRecord, docID: String) {
        if let tracked = limits.trackedDocuments, !tracked.contains(docID) { return }
        nextStamp &+= 1
        let slot = slot(for: docID)
        let index = Int(slot)
        slots[index].records.append(record)
        let excess = slots[index].records.count - limits.maxEventsPerDocument
        if excess > 0 {
            slots[index].records.removeFirst(excess)
            droppedEvents += 1
        }
        slots[index].stamp = nextStamp
        touches.append(Touch(slot: slot, stamp: nextStamp, time: record.time))
        evict(now: record.time)
    }

    /// The document's slot, claiming a free one (or a new one) for a new document; one hash
    /// lookup either way.
    private mutating func slot(for docID: String) -> Int32 {
        let candidate = freeSlots.last ?? Int32(slots.count)
        let (slot, isNew) = Self.resolve(&slotsByDocument[docID, default: -1], candidate: candidate)
        guard isNew else { return slot }
        if freeSlots.popLast() != nil {
            slots[Int(slot)].docID = docID
        } else {
            var records: [TimelineRecord] = []
            records.reserveCapacity(min(4, max(limits.maxEventsPerDocument, 1)))
            slots.append(Slot(docID: docID, records: records, stamp: 0))
        }
        return slot
    }

    private static func resolve(_ entry: inout Int32, candidate: Int32) -> (slot: Int32, isNew: Bool) {
        guard entry < 0 else { return (entry, false) }
        entry = candidate
        return (candidate, true)
    }

    private mutating func release(_ slot: Int32) {
        let index = Int(slot)
        slotsByDocument[slots[index].docID] = nil
        slots[index].records.removeAll(keepingCapacity: slots[index].records.capacity <= 16)
        slots[index].stamp = 0
        freeSlots.append(slot)
    }

    private mutating func evict(now: Double) {
        let cutoff = now - limits.timelineMaxAge
        while let oldest = touches.first {
            guard slots[Int(oldest.slot)].stamp == oldest.stamp else {
                touches.removeFirst()
                continue
            }
            guard slotsByDocument.count > limits.maxTimelineDocuments || oldest.time < cutoff else { break }
            touches.removeFirst()
            release(oldest.slot)
            evictedDocuments += 1
        }
        // Stale touches of busy documents pile up behind a live one; rebuild when they dominate.
        if touches.count > 4 * slotsByDocument.count + 1024 { compact() }
    }

    private mutating func compact() {
        var live = CircularBuffer<Touch>(initialCapacity: slotsByDocument.count)
        for touch in touches where slots[Int(touch.slot)].stamp == touch.stamp { live.append(touch) }
        touches = live
    }
}
