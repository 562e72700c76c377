import FuzzSupport
import SyncGatewayLog

/// Sync Gateway's log lines, as `inspect --sg-log` reads them from files anyone may hand it: the
/// line parser and the join with a session's requests. Input: a mode byte (which correlation ID
/// is wanted: the first one the text names, or none), then the log's text. Every kept line must
/// name the wanted ID and be at most the line limit long; every kept line lands in the join
/// exactly once, tied to a request or to the session.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let text = String(decoding: input.rest(), as: UTF8.self)
    var limits = SyncGatewayLogLimits()
    limits.maxLinesPerSession = 64
    limits.maxLineBytes = 512
    var wanted: Set<String> = []
    if mode & 1 == 1, let range = text.range(of: "c:["), let end = text[range.upperBound...].firstIndex(of: "]") {
        wanted.insert(String(text[range.upperBound..<end]))
    }
    var log = SyncGatewayLog(limits: limits)
    log.add(text, keeping: wanted)
    var kept = 0
    for (id, lines) in log.lines {
        precondition(wanted.contains(id) && lines.count <= limits.maxLinesPerSession)
        for line in lines {
            precondition(line.correlationID.map(String.init) == id, "a kept line names its ID")
            precondition(line.text.utf8.count <= limits.maxLineBytes + 4, "a kept line is cut at the limit")
        }
        kept += lines.count
        let requests: [(number: UInt64, profile: String?)] = [(1, "getCheckpoint"), (2, "subChanges"), (3, "rev"), (4, nil)]
        let join = SessionLogJoin(lines: lines, requests: requests)
        precondition(join.joined.session.count + join.joined.byRequest.values.reduce(0) { $0 + $1.count } == lines.count)
    }
    _ = kept
    return 0
}
