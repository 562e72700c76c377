import BLIPCore
import Foundation
import Replication
import SyncGatewayLog

extension WebJSON {
    // MARK: Sync Gateway's log

    /// The client's request whose Sync Gateway lines go with a message: the request itself, or
    /// the request SG's reply answers.
    static func syncGatewayRequest(direction: BLIPDirection, type: MessageType, number: MessageNumber) -> MessageNumber? {
        switch (direction, type) {
        case (.clientToServer, .request), (.serverToClient, .response), (.serverToClient, .error): return number
        default: return nil
        }
    }

    /// `sgLog`: SG's lines, each `{"time", "level", "key", "line"}`.
    static func syncGatewayLines(_ lines: [SyncGatewayLogLine], into json: inout JSONText) {
        json.beginArray("sgLog")
        for line in lines { syncGatewayLine(line, request: nil, seq: nil, into: &json) }
        json.endArray()
    }

    static func syncGatewayLine(_ line: SyncGatewayLogLine, request: UInt64?, seq: Int?, into json: inout JSONText) {
        json.beginObject()
        json.string("time", String(line.timestamp))
        json.string("level", String(line.level))
        json.string("key", line.key.map(String.init))
        json.string("line", String(line.text))
        if let request { json.int("request", Int(truncatingIfNeeded: request)) }
        if let seq { json.int("seq", seq) }
        json.endObject()
    }

    /// `GET /api/sessions/{id}/sglog`: Sync Gateway's lines of the session in the order it wrote
    /// them, each with `request` (the client's request's BLIP number) and `seq` (that request's
    /// kept message) when it is about one; nil when the session does not join SG's log.
    public static func syncGatewayLog(_ recording: SessionRecording) -> String? {
        guard let log = recording.syncGatewayLog() else { return nil }
        let seqs = log.entries.contains { $0.request != nil } ? recording.clientRequestSeqs() : [:]
        var json = JSONText(capacity: 256 + log.entries.count * 200)
        json.beginObject()
        json.int("session", Int(truncatingIfNeeded: recording.description.id))
        json.string("correlationID", recording.description.correlationID)
        json.int("dropped", log.dropped)
        json.beginArray("lines")
        for entry in log.entries {
            syncGatewayLine(entry.line, request: entry.request, seq: entry.request.flatMap { seqs[$0] }, into: &json)
        }
        json.endArray()
        json.endObject()
        return json.text
    }
}
