/// The live tail of one session for one viewer: a cursor into the session's ring, pulled by the
/// viewer's connection (``EventStreamWriter``) whenever it can take more. The relay never waits
/// for it: it only appends to the ring.
///
/// Each poll sends at most ``WebViewLimits/maxViewerBacklog`` rows. A viewer that fell further
/// behind (its connection was not writable, or the ring overwrote what it had not read) skips
/// ahead to the newest ``WebViewLimits/maxViewerBacklog`` messages and gets a `missed` event
/// saying how many it missed, so what waits for one viewer never exceeds one poll's worth.
public struct MessageFeed: Sendable {
    public let recording: SessionRecording
    /// The next seq this viewer has not seen.
    public private(set) var next: Int
    /// Messages this viewer skipped so far.
    public private(set) var missed = 0
    private var sentLive = true
    private var sentTotal = -1
    private var polls = 0

    /// Starts after `after` (the last seq the page already has; -1 for all that is kept).
    public init(recording: SessionRecording, after: Int) {
        self.recording = recording
        self.next = max(0, after + 1)
    }

    /// The events since the last poll (empty when there is nothing new); `now` on the session clock.
    public mutating func poll(now: Double) -> [ServerSentEvent] {
        let backlog = max(1, recording.limits.maxViewerBacklog)
        let snapshot = recording.snapshot()
        var events: [ServerSentEvent] = []
        let resumeAt = max(next, snapshot.oldest, snapshot.total - backlog)
        if resumeAt > next {
            let skipped = resumeAt - next
            missed += skipped
            next = resumeAt
            events.append(ServerSentEvent(event: "missed",
                                          data: "{\"missed\":\(skipped),\"resumeAt\":\(resumeAt),\"missedTotal\":\(missed)}"))
        }
        let records = recording.records(from: next, limit: backlog)
        if let last = records.last {
            // Rows are formatted once, by the first viewer to need them, and shared.
            var text = "{\"rows\":["
            var formatted: [(seq: Int, link: Int, json: String)] = []
            for (index, record) in records.enumerated() {
                if index > 0 { text += "," }
                if let row = record.row {
                    text += row
                } else {
                    let row = WebJSON.row(record, started: recording.started)
                    formatted.append((record.seq, record.link, row))
                    text += row
                }
            }
            text += "]}"
            if !formatted.isEmpty { recording.keepRows(formatted) }
            events.append(ServerSentEvent(event: "messages", data: text))
            next = last.seq + 1
        }
        polls += 1
        // The session's counters and findings: when it closes, and at most every fourth poll
        // while messages flow (they cost the analyzer's summary).
        if snapshot.isLive != sentLive || (snapshot.total != sentTotal && (polls % 4 == 1 || !snapshot.isLive)) {
            sentLive = snapshot.isLive
            sentTotal = snapshot.total
            events.append(ServerSentEvent(event: "session", data: WebJSON.session(recording, now: now)))
        }
        return events
    }
}
