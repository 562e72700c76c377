/// The live sessions list for one viewer: the whole list again whenever something changed
/// (a session opened, closed or recorded a message), at most every `every` polls. Its size is
/// bounded by the sessions kept, so it needs no backlog of its own.
public struct SessionsFeed: Sendable {
    public let history: SessionHistory
    public let downloads: (any CaptureDownloads)?
    private let every: Int
    private var stamp: SessionHistory.ChangeStamp?
    private var polls = 0

    public init(history: SessionHistory, downloads: (any CaptureDownloads)? = nil, every: Int = 4) {
        self.history = history
        self.downloads = downloads
        self.every = max(1, every)
    }

    public mutating func poll(now: Double) -> [ServerSentEvent] {
        defer { polls += 1 }
        guard stamp == nil || polls % every == 0 else { return [] }
        let current = history.changeStamp()
        guard current != stamp else { return [] }
        stamp = current
        return [ServerSentEvent(event: "sessions", data: WebJSON.sessions(history, now: now,
                                                                             captured: downloads?.capturedSessions(in: history) ?? []))]
    }
}
