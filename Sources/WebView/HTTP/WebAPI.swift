/// The web view's routes, as a pure function of the request (no sockets): the page at `/` and
/// `/ui`, its assets under `/ui/`, JSON under `/api/`, live feeds at `/api/events` and
/// `/api/sessions/{id}/events`. Served by the admin listener and by `blipscope web`.
///
/// | route | answer |
/// |---|---|
/// | `/api/sessions` | ``WebJSON/sessions(_:now:)`` |
/// | `/api/sessions/{id}` | ``WebJSON/session(_:now:)`` |
/// | `/api/sessions/{id}/messages?after&limit&…` | ``WebJSON/messages(_:filter:from:limit:)`` (``MessageFilter``) |
/// | `/api/sessions/{id}/messages/{seq}` | ``WebJSON/detail(_:seq:)`` |
/// | `/api/sessions/{id}/findings` | ``WebJSON/findings(_:now:)`` |
/// | `/api/sessions/{id}/sglog` | ``WebJSON/syncGatewayLog(_:)`` (with `--sg-log`) |
/// | `/api/sessions/{id}/events?after=SEQ` | ``MessageFeed`` |
/// | `/api/sessions/{id}/capture.blipcap`, `…/capture.pcap` | the capture, when there is one |
/// | `/api/docs/{docID}` | ``WebJSON/document(_:history:)`` |
/// | `/api/events` | ``SessionsFeed`` |
public struct WebAPI: Sendable {
    public let history: SessionHistory
    public let downloads: (any CaptureDownloads)?
    /// The clock of the recordings (monotonic seconds for the relay; the capture's for files).
    public let now: @Sendable () -> Double

    public init(history: SessionHistory, downloads: (any CaptureDownloads)? = nil, now: @escaping @Sendable () -> Double) {
        self.history = history
        self.downloads = downloads
        self.now = now
    }

    /// True for the paths this serves (the admin listener hands them over).
    public static func serves(_ path: String) -> Bool {
        path == "/" || path == "/ui" || path.hasPrefix("/ui/") || path.hasPrefix("/api/") || path == "/api"
    }

    public func respond(to request: WebRequest) -> WebResponse {
        let path = request.path
        if path == "/" || path == "/ui" || path == "/ui/" { return WebAssets.response(for: "index.html") }
        if path.hasPrefix("/ui/") { return WebAssets.response(for: String(path.dropFirst(4))) }
        if path == "/api/sessions" || path == "/api/sessions/" {
            return .json(WebJSON.sessions(history, now: now(), captured: downloads?.capturedSessions(in: history) ?? []))
        }
        if path == "/api/events" { return .sessionsFeed(SessionsFeed(history: history, downloads: downloads)) }
        if path.hasPrefix("/api/docs/") {
            let docID = WebRequest.decode(path.dropFirst("/api/docs/".count), plusIsSpace: false)
            return .json(WebJSON.document(docID, history: history))
        }
        if path.hasPrefix("/api/sessions/") { return session(path.dropFirst("/api/sessions/".count).split(separator: "/"), request) }
        return .notFound("not found")
    }

    private func session(_ parts: [Substring], _ request: WebRequest) -> WebResponse {
        guard let first = parts.first, let id = UInt64(first), let recording = history.recording(id) else {
            return .notFound("no such session")
        }
        let limits = history.limits
        switch parts.count {
        case 1:
            return .json(WebJSON.session(recording, now: now(), captured: downloads?.captureFile(sessionID: id) != nil))
        case 2 where parts[1] == "messages":
            let from = request.int("after", default: -1, in: -1...Int.max - 1) + 1
            let limit = request.int("limit", default: limits.maxPageSize, in: 1...limits.maxPageSize)
            return .json(WebJSON.messages(recording, filter: MessageFilter(query: request.query), from: from, limit: limit))
        case 3 where parts[1] == "messages":
            guard let seq = Int(parts[2]), let detail = WebJSON.detail(recording, seq: seq) else {
                return .notFound("no such message (it may have left the session's ring)")
            }
            return .json(detail)
        case 2 where parts[1] == "findings":
            return .json(WebJSON.findings(recording, now: now()))
        case 2 where parts[1] == "sglog":
            guard let log = WebJSON.syncGatewayLog(recording) else { return .notFound("this session has no Sync Gateway log (--sg-log)") }
            return .json(log)
        case 2 where parts[1] == "events":
            return .messageFeed(MessageFeed(recording: recording, after: request.int("after", default: -1, in: -1...Int.max - 1)))
        case 2 where parts[1] == "capture.blipcap":
            guard let path = downloads?.captureFile(sessionID: id) else { return .notFound("no capture of this session") }
            return .file(path: path, contentType: "application/octet-stream", name: "session-\(id).blipcap")
        case 2 where parts[1] == "capture.pcap":
            guard let downloads, downloads.captureFile(sessionID: id) != nil else { return .notFound("no capture of this session") }
            return .madeFile(make: { downloads.pcapFile(sessionID: id) }, contentType: "application/vnd.tcpdump.pcap",
                             name: "session-\(id).pcap")
        default:
            return .notFound("not found")
        }
    }
}
