import NIOCore

/// Per-document timelines with bounded memory: at most `maxTimelineDocuments` documents, each
/// with its latest `maxEventsPerDocument` events; documents idle longer than `timelineMaxAge`
/// and, beyond the count, the least recently active ones are evicted.
struct DocumentTimelines {
    private struct Timeline {
        var events: [TimelineEvent] = []
        var stamp: UInt64 = 0
    }

    private struct Touch {
        var docID: String
        var stamp: UInt64
        var time: Double
    }

    private let limits: AnalyzerLimits
    private var timelines: [String: Timeline] = [:]
    /// Every touch in order; entries whose stamp is no longer the document's are stale.
    private var touches = CircularBuffer<Touch>()
    private var nextStamp: UInt64 = 0
    private(set) var evictedDocuments = 0
    private(set) var droppedEvents = 0

    init(limits: AnalyzerLimits) { self.limits = limits }

    var documentCount: Int { timelines.count }

    func events(for docID: String) -> [TimelineEvent] { timelines[docID]?.events ?? [] }

    var documentIDs: [String] { Array(timelines.keys) }

    mutating func append(_ event: TimelineEvent) {
        if let tracked = limits.trackedDocuments, !tracked.contains(event.docID) { return }
        nextStamp &+= 1
        var timeline = timelines.removeValue(forKey: event.docID) ?? Timeline()
        timeline.events.append(event)
        if timeline.events.count > limits.maxEventsPerDocument {
            timeline.events.removeFirst(timeline.events.count - limits.maxEventsPerDocument)
            droppedEvents += 1
        }
        timeline.stamp = nextStamp
        timelines[event.docID] = timeline
        touches.append(Touch(docID: event.docID, stamp: nextStamp, time: event.time))
        evict(now: event.time)
    }

    private mutating func evict(now: Double) {
        let cutoff = now - limits.timelineMaxAge
        while let oldest = touches.first {
            guard timelines[oldest.docID]?.stamp == oldest.stamp else {
                touches.removeFirst()
                continue
            }
            guard timelines.count > limits.maxTimelineDocuments || oldest.time < cutoff else { break }
            touches.removeFirst()
            timelines[oldest.docID] = nil
            evictedDocuments += 1
        }
        // Stale touches of busy documents pile up behind a live one; rebuild when they dominate.
        if touches.count > 4 * timelines.count + 1024 { compact() }
    }

    private mutating func compact() {
        var live: [Touch] = []
        live.reserveCapacity(timelines.count)
        for touch in touches where timelines[touch.docID]?.stamp == touch.stamp { live.append(touch) }
        touches = CircularBuffer(live)
    }
}
