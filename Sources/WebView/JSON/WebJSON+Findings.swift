import BLIPCore
import Foundation
import Replication
import SyncGatewayLog

extension WebJSON {
    // MARK: findings and documents

    /// `GET /api/sessions/{id}/findings`: every finding (``SessionAnalyzer/allFindings(now:)``) with
    /// `seq`, the kept message it cites, when there is one.
    public static func findings(_ recording: SessionRecording, now: Double) -> String {
        let snapshot = recording.snapshot()
        let findings = recording.analyzer?.allFindings(now: snapshot.endTime ?? now) ?? []
        var json = JSONText(capacity: 256 + findings.count * 256)
        json.beginObject()
        json.int("session", Int(truncatingIfNeeded: recording.description.id))
        json.beginArray("findings")
        for finding in findings {
            json.beginObject()
            json.raw("finding", ReplicationJSON.encode(finding))
            json.double("t", finding.time - recording.started)
            json.int("seq", seq(citedBy: finding, in: recording))
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.text
    }

    /// The kept message a finding names: its number from its side (a request first), else the
    /// same number either way.
    static func seq(citedBy finding: Finding, in recording: SessionRecording) -> Int? {
        guard let number = finding.number else { return nil }
        if let side = finding.side, let seq = recording.seq(of: side, type: .request, number: number, atOrBefore: finding.time) {
            return seq
        }
        for direction in [BLIPDirection.clientToServer, .serverToClient] {
            if let seq = recording.seq(of: direction, type: nil, number: number, atOrBefore: finding.time) { return seq }
        }
        return nil
    }

    /// `GET /api/docs/{docID}`: the document's timeline in every kept session, each event with the
    /// session and the kept message it comes from.
    public static func document(_ docID: String, history: SessionHistory) -> String {
        var json = JSONText(capacity: 1024)
        json.beginObject()
        json.string("doc", docID)
        json.beginArray("events")
        for recording in history.recordings() {
            guard let analyzer = recording.analyzer else { continue }
            for event in analyzer.timeline(docID: docID) {
                json.beginObject()
                json.int("session", Int(truncatingIfNeeded: recording.description.id))
                json.double("t", event.time - recording.started)
                json.int("seq", recording.seq(of: event.from, type: event.type, number: event.number, atOrBefore: event.time))
                json.raw("event", ReplicationJSON.encode(event))
                if let request = syncGatewayRequest(direction: event.from, type: event.type, number: event.number) {
                    let lines = recording.syncGatewayLines(forRequest: request)
                    if !lines.isEmpty { syncGatewayLines(lines, into: &json) }
                }
                json.endObject()
            }
        }
        json.endArray()
        json.endObject()
        return json.text
    }
}
