/// The live tail of one session for one viewer: a cursor into the session's ring, pulled by the
/// viewer's connection (``EventStreamWriter``) whenever it can take more. The relay never waits
/// for it: it only appends to the ring.
///
/// Each poll sends the rows that follow the cursor, at most ``WebViewLimits/maxViewerBatchBytes``
/// of them (or the smaller budget its writer has left of the viewer's byte rate) (``hasMore`` then says the writer should poll again as soon as the batch is taken), so
/// a viewer that keeps up gets every message. A viewer skips ahead, with a `missed` event saying
/// how many it missed, only when it truly fell behind: its connection did not take what it was
/// sent (``fellBehind()``), or the ring overwrote what it had not read.
public struct MessageFeed: Sendable {
    public let recording: SessionRecording
    /// The next seq this viewer has not seen.
    public private(set) var next: Int
    /// Messages this viewer skipped so far.
    public private(set) var missed = 0
    /// True when the last poll stopped at its byte budget with more rows waiting.
    public private(set) var hasMore = false
    private var behind = false
    private var sentLive = true
    private var sentTotal = -1
    private var polls = 0

    /// Starts after `after` (the last seq the page already has; -1 for all that is kept).
    public init(recording: SessionRecording, after: Int) {
        self.recording = recording
        self.next = max(0, after + 1)
    }

    /// The viewer's connection did not take what it was sent: the next poll skips to the newest.
    public mutating func fellBehind() { behind = true }

    /// The events since the last poll (empty when there is nothing new); `now` on the session clock.
    /// `budget` caps the rows' bytes below ``WebViewLimits/maxViewerBatchBytes`` (one row is always sent).
    public mutating func poll(now: Double, budget: Int = .max) -> [ServerSentEvent] {
        let budget = max(1, min(recording.limits.maxViewerBatchBytes, budget))
        let snapshot = recording.snapshot()
        var events: [ServerSentEvent] = []
        let resumeAt = max(next, snapshot.oldest, behind ? snapshot.total : next)
        behind = false
        if resumeAt > next {
            let skipped = resumeAt - next
            missed += skipped
            next = resumeAt
            events.append(ServerSentEvent(event: "missed",
                                          data: "{\"missed\":\(skipped),\"resumeAt\":\(resumeAt),\"missedTotal\":\(missed)}"))
        }
        // Rows are formatted once, by the first viewer to need them, and shared.
        var text = "{\"rows\":["
        var formatted: [(seq: Int, link: Int, json: String)] = []
        var sent = 0
        hasMore = false
        fill: while true {
            let records = recording.records(from: next, limit: 256)
            // The ring moved past the cursor meanwhile: the next poll says how many were missed.
            guard let first = records.first, first.seq == next else { break }
            for record in records {
                let row: String
                if let kept = record.row {
                    row = kept
                } else {
                    row = WebJSON.row(record, started: recording.started)
                    formatted.append((record.seq, record.link, row))
                }
                if sent > 0, text.utf8.count + row.utf8.count + 3 > budget {
                    hasMore = true
                    break fill
                }
                if sent > 0 { text += "," }
                text += row
                sent += 1
                next = record.seq + 1
            }
        }
        if !formatted.isEmpty { recording.keepRows(formatted) }
        if sent > 0 {
            text += "]}"
            events.append(ServerSentEvent(event: "messages", data: text))
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
