/// One line of Sync Gateway's log (console, or an `sg_*.log` file: the same text), with the
/// fields a BLIP session is joined on. The format (docs/sync-gateway-behaviour.md, "Its log"):
///
/// ```
/// 2026-12-05T12:14:52.415Z [INF] SyncMsg: c:[684961ef] db:db col:_default #2: Type:getCheckpoint Client:cp-…
/// ```
///
/// timestamp, `[LVL]`, a log key (absent on warnings and errors), then the replication's
/// context: `c:[ID]` (the BLIP context ID Sync Gateway also sends as `X-Correlation-ID` in the
/// 101), `db:`, `col:`, and for a handled request `#N:` (Sync Gateway's count of the requests it
/// handled on that connection, which is usually, not always, the BLIP request number) and
/// `Type:PROFILE`. Lines of HTTP requests carry `c:#NNN` instead and name no replication.
public struct SyncGatewayLogLine: Sendable, Equatable {
    /// As written (ISO 8601 with milliseconds and a zone).
    public var timestamp: Substring
    /// `INF`, `DBG`, `WRN`, `ERR`, `TRC`.
    public var level: Substring
    /// `SyncMsg`, `Sync`, `WS`, `HTTP`, `CRUD`…; nil when the line has none.
    public var key: Substring?
    /// The replication's context ID (`c:[…]`), nil for a line of no BLIP connection.
    public var correlationID: Substring?
    public var database: Substring?
    public var collection: Substring?
    /// `#N:` of a handled request.
    public var requestNumber: Int?
    /// `Type:PROFILE` of a handled request.
    public var profile: Substring?
    /// The whole line, as read.
    public var text: Substring

    /// The line's fields, or nil when it does not start with a timestamp and a `[LVL]` (a
    /// continuation of a multi-line message, a banner).
    public init?(_ line: Substring) {
        text = line
        var words = line.split(separator: " ", maxSplits: 12, omittingEmptySubsequences: true)[...]
        guard let time = words.popFirst(), time.count >= 20, time.first?.isNumber == true,
              let bracket = words.popFirst(), bracket.count == 5, bracket.first == "[", bracket.last == "]" else { return nil }
        timestamp = time
        level = bracket.dropFirst().dropLast()
        if let word = words.first, word.last == ":", !word.hasPrefix("c:"), !word.hasPrefix("#") {
            key = word.dropLast()
            words = words.dropFirst()
        }
        while let word = words.first {
            if word.hasPrefix("c:[") && word.hasSuffix("]") {
                correlationID = word.dropFirst(3).dropLast()
            } else if word.hasPrefix("db:") {
                database = word.dropFirst(3)
            } else if word.hasPrefix("col:") {
                collection = word.dropFirst(4)
            } else if word.hasPrefix("c:#") {
                // an HTTP request's number: no replication
            } else if word.hasPrefix("#"), key == "HTTP" {
                break  // the HTTP request's count (`#005:    --> BLIP+WebSocket connection closed`), not a BLIP request's
            } else if word.hasPrefix("#"), word.hasSuffix(":"), let number = Int(word.dropFirst().dropLast()) {
                requestNumber = number
                if let type = words.dropFirst().first, type.hasPrefix("Type:") { profile = type.dropFirst(5) }
                break
            } else {
                break
            }
            words = words.dropFirst()
        }
    }
}

extension SyncGatewayLogLine {
    /// The same line in storage of its own: a line read from a whole file shares the file's text,
    /// which a line kept for long (the web view's) must not hold alive.
    public func owned() -> SyncGatewayLogLine { SyncGatewayLogLine(Substring(String(text))) ?? self }
}
