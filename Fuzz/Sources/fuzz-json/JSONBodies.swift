import FuzzSupport
import Mediation
import NIOCore
import Replication

/// The JSON readers of replication bodies: ``JSONValue/init(parsing:)`` (the analyzer's strict
/// parser) and the mediator's ``ChangesFilter`` (its array scanner), which cuts entries out of a
/// `changes`/`proposeChanges` body and maps the receiver's reply back.
///
/// Input: a mode byte (bit 0: changes or proposeChanges; the rest salts which documents are
/// kept), the request body (`len16 || bytes`), then a reply body. A parsed value must render to
/// text that parses to the same value; a filtered body must be the original's kept entries,
/// byte for byte, still valid JSON when the original was; a rewritten reply of valid JSON must
/// be valid JSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let kind: ChangesFilter.Kind = mode & 1 == 0 ? .changes : .proposeChanges
    let salt = mode >> 1
    let body = ByteBuffer(fuzzBytes: input.record())
    let reply = ByteBuffer(fuzzBytes: input.rest())

    let parsed = roundTrip(body)
    _ = roundTrip(reply)

    let keep: (String) -> Bool = { docID in
        var hash: UInt32 = 2_166_136_261
        for byte in docID.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return (hash ^ UInt32(salt)) & 1 == 0
    }
    let outcome: ChangesFilter.Outcome
    do {
        outcome = try ChangesFilter(kind: kind).filter(body, keep: keep)
    } catch {
        return 0
    }
    switch outcome {
    case .unchanged:
        break
    case .answer(let answer):
        fuzzCheck(JSONValue(parsing: answer)?.arrayValue != nil, "the answer is not a JSON array")
    case .filtered(let filtered, let rewrite, let kept, let originalCount):
        fuzzCheck(kept.count < originalCount && !kept.isEmpty, "kept \(kept.count) of \(originalCount)")
        if let entries = parsed?.arrayValue {
            fuzzCheck(entries.count == originalCount, "the filter saw \(originalCount) entries, JSON has \(entries.count)")
            let expected = JSONValue.array(kept.map { entries[$0] })
            fuzzCheck(JSONValue(parsing: filtered) == expected, "the filtered body is not the kept entries")
        }
        if let rewritten = try? rewrite.rewriteBody(reply), JSONValue(parsing: reply) != nil {
            fuzzCheck(JSONValue(parsing: rewritten)?.arrayValue != nil, "a rewritten reply is not a JSON array")
        }
    }
    return 0
}

/// Parses `buffer`; a value renders to text that parses back to it.
private func roundTrip(_ buffer: ByteBuffer) -> JSONValue? {
    guard let value = JSONValue(parsing: buffer) else { return nil }
    let text = value.description
    fuzzCheck(JSONValue(parsing: ByteBuffer(string: text)) == value, "\(text) does not parse back to its value")
    _ = value.isTruthy
    _ = value.intValue
    return value
}
