import BLIPCore
import Foundation
import Replication
import SyncGatewayLog

/// The JSON the page reads, built when a viewer asks (nothing here runs on the relay's hot path).
/// Every property shown is redacted (``Redaction``); times are seconds since the session opened
/// unless named `…WallClock`.
public enum WebJSON {
    /// Doc IDs a message row carries (`docs`, with `dx` when it names more); the detail has
    /// them all, and the page's document filter asks the server (`doc=`), which reads them all.
    public static let rowDocuments = 8

    // MARK: sessions

    /// `GET /api/sessions`: every kept session, live and closed, oldest first. `captured`: the
    /// sessions whose capture can be downloaded (`"capture": true`; the page offers the links
    /// only then).
    public static func sessions(_ history: SessionHistory, now: Double, captured: Set<UInt64> = []) -> String {
        var json = JSONText(capacity: 4096)
        json.beginObject()
        json.beginArray("sessions")
        for recording in history.recordings() {
            session(recording, now: now, captured: captured.contains(recording.description.id), into: &json)
        }
        json.endArray()
        json.int("notRecorded", history.notRecorded)
        limits(history.limits, into: &json)
        json.endObject()
        return json.text
    }

    /// `GET /api/sessions/{id}`; `captured` nil leaves `capture` out (the live feed's updates).
    public static func session(_ recording: SessionRecording, now: Double, captured: Bool? = nil) -> String {
        var json = JSONText()
        session(recording, now: now, captured: captured, into: &json)
        return json.text
    }

    static func session(_ recording: SessionRecording, now: Double, captured: Bool?, into json: inout JSONText) {
        let snapshot = recording.snapshot()
        let description = recording.description
        let end = snapshot.endTime ?? now
        json.beginObject()
        json.int("id", Int(truncatingIfNeeded: description.id))
        json.string("client", description.clientAddress)
        json.string("user", description.user)
        json.string("database", description.database)
        json.string("upstream", description.upstream)
        if let node = description.node { json.string("node", node) }
        json.string("subprotocol", description.subprotocol)
        if let source = description.source { json.string("source", source) }
        if let correlationID = description.correlationID { json.string("correlationID", correlationID) }
        json.double("startWallClock", description.startedWallClock)
        json.double("duration", max(0, end - recording.started))
        json.bool("live", snapshot.isLive)
        json.string("closeReason", snapshot.closeReason)
        json.beginArray("messages"); json.int(nil, snapshot.messages[0]); json.int(nil, snapshot.messages[1]); json.endArray()
        json.beginArray("bytes"); json.int(nil, snapshot.bytes[0]); json.int(nil, snapshot.bytes[1]); json.endArray()
        json.int("errors", snapshot.errors)
        // Messages kept without their body preview and properties, or without the analyzer's
        // reading, because the session's budget for them was spent (``WebViewLimits``).
        json.int("previewsNotKept", snapshot.previewsSkipped)
        json.int("readingsNotKept", snapshot.analysesSkipped)
        json.int("total", snapshot.total)
        json.int("oldest", snapshot.oldest)
        if let captured { json.bool("capture", captured) }
        if let log = recording.syncGatewayLog() {
            json.beginObject("sgLog")
            json.int("lines", log.entries.count)
            json.int("dropped", log.dropped)
            json.endObject()
        }
        if let analyzer = recording.analyzer {
            let summary = analyzer.summary()
            json.beginObject("replication")
            json.string("type", summary.replicationType)
            if let continuous = summary.continuous { json.bool("continuous", continuous) }
            json.string("collectionMode", summary.collectionMode)
            json.beginArray("collections")
            for collection in summary.collections { json.string(nil, collection) }
            json.endArray()
            json.raw("pushed", ReplicationJSON.encode(summary.pushed))
            json.raw("pulled", ReplicationJSON.encode(summary.pulled))
            json.int("conflicts", summary.conflicts)
            json.bool("caughtUp", summary.caughtUp)
            json.endObject()
            let findings = analyzer.allFindings(now: snapshot.endTime ?? now)
            json.beginObject("findings")
            json.int("count", findings.count)
            json.beginArray("kinds")
            for kind in Set(findings.map(\.kind.rawValue)).sorted() { json.string(nil, kind) }
            json.endArray()
            json.endObject()
        }
        json.endObject()
    }

    static func limits(_ limits: WebViewLimits, into json: inout JSONText) {
        json.beginObject("limits")
        json.int("maxLiveSessions", limits.maxLiveSessions)
        json.int("maxClosedSessions", limits.maxClosedSessions)
        json.int("maxMessagesPerSession", limits.maxMessagesPerSession)
        json.int("bodyPreviewBytes", limits.bodyPreviewBytes)
        json.int("maxViewerBatchBytes", limits.maxViewerBatchBytes)
        json.endObject()
    }

    // MARK: messages

    /// `GET /api/sessions/{id}/messages?after=SEQ&limit=N&…filters`: one page of rows, oldest
    /// first; `next` is where the following page starts.
    public static func messages(_ recording: SessionRecording, filter: MessageFilter, from: Int, limit: Int) -> String {
        let records = filter.isEmpty
            ? recording.records(from: from, limit: limit)
            : recording.records(matching: filter, from: from, limit: limit)
        let snapshot = recording.snapshot()
        var json = JSONText(capacity: 128 + records.count * 160)
        json.beginObject()
        json.int("session", Int(truncatingIfNeeded: recording.description.id))
        json.int("total", snapshot.total)
        json.int("oldest", snapshot.oldest)
        json.int("next", records.last.map { $0.seq + 1 } ?? max(from, snapshot.oldest))
        json.bool("more", records.count == limit)
        json.beginArray("rows")
        for record in records { row(record, started: recording.started, into: &json) }
        json.endArray()
        json.endObject()
        return json.text
    }

    /// One row: `i` seq, `t` time, `d` 0 client→server / 1 server→client, `ty` type, `n` number,
    /// `fl` flags, `p` profile, `s` summary, `w` wire bytes, `u` uncompressed bytes, `r` round trip,
    /// `l` linked seq (-1 none), `e` error, `f` findings raised, `docs` first document IDs (`dx` when
    /// there are more than ``rowDocuments``).
    public static func row(_ record: MessageRecord, started: Double) -> String {
        var json = JSONText()
        row(record, started: started, into: &json)
        return json.text
    }

    static func row(_ record: MessageRecord, started: Double, into json: inout JSONText) {
        json.beginObject()
        json.int("i", record.seq)
        json.double("t", ((record.time - started) * 1e6).rounded() / 1e6)
        json.int("d", Int(record.direction.rawValue))
        json.string("ty", record.type.description)
        json.int("n", Int(truncatingIfNeeded: record.number))
        json.string("fl", flags(record.flags))
        json.string("p", record.profile)
        json.string("s", record.summary)
        json.int("w", record.wireBytes)
        json.int("u", record.streamBytes)
        json.double("r", record.roundTrip.isNaN ? nil : record.roundTrip)
        json.int("l", record.link)
        json.bool("e", record.isError)
        json.int("f", record.analysis?.findings.count ?? 0)
        if record.byRelay { json.bool("relay", true) }
        let docs = record.documentIDs(limit: rowDocuments + 1)
        if !docs.isEmpty {
            json.beginArray("docs")
            for doc in docs.prefix(rowDocuments) { json.string(nil, doc) }
            json.endArray()
            // It names more: the page asks the server (`doc=`) to filter by document exactly.
            if docs.count > rowDocuments { json.bool("dx", true) }
        }
        json.endObject()
    }

    static func flags(_ flags: FrameFlags) -> String {
        var parts: [String] = []
        if flags.isCompressed { parts.append("Z") }
        if flags.isUrgent { parts.append("U") }
        if flags.isNoReply { parts.append("N") }
        return parts.joined()
    }

    /// `GET /api/sessions/{id}/messages/{seq}`: everything about one message, with its pair's row.
    public static func detail(_ recording: SessionRecording, seq: Int) -> String? {
        guard let record = recording.record(seq: seq) else { return nil }
        var json = JSONText(capacity: 2048)
        json.beginObject()
        json.int("session", Int(truncatingIfNeeded: recording.description.id))
        json.raw("row", row(record, started: recording.started))
        if let properties = record.redactedProperties {
            json.beginArray("properties")
            for pair in properties {
                json.beginArray(); json.string(nil, pair.key); json.string(nil, pair.value); json.endArray()
            }
            json.endArray()
        } else {
            json.string("properties", nil)
        }
        json.int("propertyCount", record.propertyCount)
        json.int("bodyBytes", record.bodyBytes)
        json.int("bodyKept", record.previewBytes)
        json.string("bodyBase64", Data(record.bodyPreview).base64EncodedString())
        json.int("frames", record.frameCount)
        json.int("acks", record.acks)
        carriage(record, started: recording.started, into: &json)
        json.bool("compressed", record.flags.isCompressed)
        json.beginArray("docs")
        for doc in record.documentIDs() { json.string(nil, doc) }
        json.endArray()
        json.raw("findings", ReplicationJSON.encode(record.analysis?.findings ?? []))
        if record.link >= 0, let other = recording.record(seq: record.link) {
            json.raw("linked", row(other, started: recording.started))
        }
        if let request = syncGatewayRequest(direction: record.direction, type: record.type, number: record.number) {
            syncGatewayLines(recording.syncGatewayLines(forRequest: request), into: &json)
        }
        json.endObject()
        return json.text
    }

    /// The frames and ACKs that carried a message: `frameList` (`d` direction, `fl` flags with
    /// `M` for MoreComing, `w` on-wire bytes of the whole frame, `t` time), `framesNotKept` (the
    /// earlier frames beyond ``WebViewLimits/maxFramesPerMessage``, between the kept ones and
    /// the last), `ackList` (`from` the side that sent it, `bytes` acknowledged, `t`), `acksNotKept`.
    static func carriage(_ record: MessageRecord, started: Double, into json: inout JSONText) {
        let carriage = record.carriage
        let direction = Int(record.direction.rawValue)
        func frame(_ frame: MessageCarriage.Frame) {
            json.beginObject()
            json.int("d", direction)
            var text = flags(FrameFlags(rawValue: frame.flags))
            if frame.flags & FrameFlags.moreComing != 0 { text = "M" + text }
            json.string("fl", text)
            json.int("w", Int(frame.wireBytes))
            json.double("t", time(frame.time, started))
            json.endObject()
        }
        json.beginArray("frameList")
        for earlier in carriage?.frames ?? [] { frame(earlier) }
        frame(MessageCarriage.lastFrame(of: record, carriage: carriage))
        json.endArray()
        // Earlier frames not kept, and earlier frames that never reached the history (the
        // message began before it was recorded, or the in-progress table was cleared).
        json.int("framesNotKept", max(carriage?.framesNotKept ?? 0, record.frameCount - 1 - (carriage?.frames.count ?? 0)))
        json.beginArray("ackList")
        for ack in carriage?.acks ?? [] {
            json.beginObject()
            json.int("from", Int(ack.from.rawValue))
            json.int("bytes", Int(clamping: ack.bytes))
            json.double("t", time(ack.time, started))
            json.endObject()
        }
        json.endArray()
        json.int("acksNotKept", carriage?.acksNotKept ?? 0)
    }

    static func time(_ time: Double, _ started: Double) -> Double? {
        time.isFinite ? ((time - started) * 1e6).rounded() / 1e6 : nil
    }
}
