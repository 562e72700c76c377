import BLIPCore
import Capture
import BLIPNIO
import Replication
import NIOCore

/// Builds one log line, text or JSON, for ``LoggingObserver``: each method returns the open
/// ``LineBuilder``, which the observer finishes into its ``LogLineSink`` or into a `String` for
/// swift-log. Plain byte appends, no formatters: the relay logs on its event loops.
struct LogLine {
    let format: RelayConfiguration.LogFormat
    let redactBodies: Bool
    let withBody: Bool

    /// Property names whose values are never logged (``PropertyRedaction``).
    static func isSecret(_ key: UnsafeRawBufferPointer) -> Bool { PropertyRedaction.isSecret(key) }

    static let maxValueLength = 80
    static let maxBodyPreview = 256

    func opened(_ info: SessionInfo) -> LineBuilder {
        var list: [(StaticString, Value)] = [("event", .text("open")), ("session", .int(Int(info.id))), ("client", .text(info.clientAddress)),
                ("user", info.user.map { .text($0) } ?? .null), ("db", .text(info.database)),
                ("protocol", info.subprotocol.map { .text($0) } ?? .null), ("upstream", .text(info.upstream))]
        // Behind a load balancer: the client is the PROXY header's, the connection the balancer's.
        if let proxy = info.client.proxyDescription { list.append(("via", .text(proxy))) }
        // Sync Gateway's context ID: its log lines of this replication start with c:[ID].
        if let id = info.correlationID { list.append(("correlationID", .text(id))) }
        // The Sync Gateway node that upgraded the session (also in `upstream`, with its prefix).
        if let node = info.node { list.append(("node", .text(node.label))) }
        return fields(list)
    }

    func closed(_ summary: SessionSummary) -> LineBuilder {
        let info = summary.info, stats = summary.statistics
        var list: [(StaticString, Value)] = [("event", .text("close")), ("session", .int(Int(info.id))), ("client", .text(info.clientAddress)),
                       ("user", info.user.map { .text($0) } ?? .null), ("db", .text(info.database)),
                       ("protocol", info.subprotocol.map { .text($0) } ?? .null),
                       ("clientClose", close(summary.clientClose)), ("upstreamClose", close(summary.upstreamClose)),
                       ("relayError", summary.relayError.map { .text($0.description) } ?? .null),
                       ("messagesC2U", .int(stats.messagesDecoded[0])), ("messagesU2C", .int(stats.messagesDecoded[1])),
                       ("bytesC2U", .int(stats.bytesForwarded[0])), ("bytesU2C", .int(stats.bytesForwarded[1])),
                       ("decodeErrors", .int(stats.decodeErrors[0] + stats.decodeErrors[1]))]
        if stats.unpairedReplies > 0 { list.append(("unpairedReplies", .int(stats.unpairedReplies))) }
        return fields(list)
    }

    private func close(_ close: WebSocketClose?) -> Value {
        guard let close else { return .null }
        return .text(close.abrupt ? "1006 (TCP dropped without CLOSE)" : close.description)
    }

    /// The replication summary of a closed session, as one line (JSON under `replication`).
    func replicationSummary(_ id: UInt64, _ summary: ReplicationSummary) -> LineBuilder {
        var list: [(StaticString, Value)] = [("event", .text("summary")), ("session", .int(Int(id))),
                                             ("replication", .text(summary.replicationType)),
                                             ("pulledDocs", .int(summary.pulled.documents)), ("pulledRevs", .int(summary.pulled.revisionsStored)),
                                             ("pushedDocs", .int(summary.pushed.documents)), ("pushedRevs", .int(summary.pushed.revisionsStored)),
                                             ("tombstones", .int(summary.pulled.tombstones + summary.pushed.tombstones)),
                                             ("attachments", .int(summary.pulled.attachmentsSent + summary.pushed.attachmentsSent)),
                                             ("conflicts", .int(summary.conflicts)), ("caughtUp", .text(summary.caughtUp ? "yes" : "no"))]
        if let continuous = summary.continuous { list.append(("continuous", .text(continuous ? "yes" : "no"))) }
        // What went out but is not (or not yet) known stored: NoReply revs not confirmed, refused ones.
        for (name, counts) in [("pulled", summary.pulled), ("pushed", summary.pushed)] as [(String, TransferCounts)] {
            guard counts.revisionsSent != counts.revisionsStored else { continue }
            list.append((name == "pulled" ? "pulledRevsSent" : "pushedRevsSent", .int(counts.revisionsSent)))
            if counts.revisionsUnconfirmed > 0 {
                list.append((name == "pulled" ? "pulledUnconfirmed" : "pushedUnconfirmed", .int(counts.revisionsUnconfirmed)))
            }
            if counts.revisionsNotStored > 0 {
                list.append((name == "pulled" ? "pulledNotStored" : "pushedNotStored", .int(counts.revisionsNotStored)))
            }
        }
        if summary.pulled.revisionsRevoked > 0 { list.append(("pulledRevoked", .int(summary.pulled.revisionsRevoked))) }
        let withheld = summary.pushed.revisionsWithheld + summary.pulled.revisionsWithheld
        if withheld > 0 { list.append(("withheldRevs", .int(withheld))) }
        if summary.newCheckpoints > 0 { list.append(("newCheckpoints", .int(summary.newCheckpoints))) }
        let errors = summary.errorsByDomainAndCode.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }
        if !errors.isEmpty { list.append(("errors", .text(errors.joined(separator: ",")))) }
        if !summary.findings.isEmpty { list.append(("findings", .text(summary.findings.map(\.text).joined(separator: ",")))) }
        return fields(list)
    }

    /// A finding the session's analyzer made, logged once, when it is first made; a standing one
    /// (a 409 loop) then counts on, and the summary line at close gives its running count.
    func finding(_ id: UInt64, _ finding: Finding, at time: ReceiptTime? = nil) -> LineBuilder {
        fields([("event", .text("finding")), ("session", .int(Int(id))), ("kind", .text(finding.kind.rawValue)),
                ("side", finding.side.map { .text($0.description) } ?? .null),
                ("profile", finding.profile.map { .text($0) } ?? .null), ("text", .text(finding.description))], time: time)
    }

    /// Lines a log sink dropped because its reader fell behind by more than `limit` bytes (a
    /// pipe nobody read, a stalled disk): written where they would have been.
    func logDropped(lines: Int, bytes: Int, limit: Int) -> LineBuilder {
        fields([("event", .text("log-dropped")), ("lines", .int(lines)), ("bytes", .int(bytes)), ("limit", .int(limit)),
                ("reason", .text("the log's reader fell behind"))])
    }

    func refused(_ refusal: HandshakeRefusal) -> LineBuilder {
        var list: [(StaticString, Value)] = [("event", .text("refused")), ("client", .text(refusal.clientAddress)), ("target", .text(refusal.target)),
                                             ("status", .int(Int(refusal.status.code))), ("reason", .text(refusal.reason))]
        if let proxy = refusal.client.proxyDescription { list.append(("via", .text(proxy))) }
        return fields(list)
    }

    /// A phase of the relay's drain.
    func drain(_ phase: DrainPhase) -> LineBuilder {
        var list: [(StaticString, Value)] = [("event", .text("drain")), ("phase", .text(phase.name))]
        if let sessions = phase.sessions { list.append(("sessions", .int(sessions))) }
        if case .started(_, let timeout) = phase { list.append(("timeoutMs", .millis(timeout.nanoseconds))) }
        list.append(("text", .text(phase.description)))
        return fields(list)
    }

    /// A connection closed before its request for want of a PROXY protocol header: who
    /// connected (the load balancer, or a client that came around it) and why.
    func proxyRefused(_ refusal: ProxyRefusal) -> LineBuilder {
        fields([("event", .text("proxy-refused")), ("peer", .text(refusal.peerDescription)),
                ("kind", .text(refusal.reason.label)), ("reason", .text(refusal.reason.description))])
    }

    /// One message: `summary` is the replication reading of it; without one, the analyzer's
    /// (``MessageEvent/analysis``), when there is one. Written straight into one byte buffer:
    /// properties are read as raw bytes (no string per property), the analyzer's summary is
    /// copied in without becoming a String, numbers are written digit by digit.
    ///
    /// The first `Profile` comes first, then what the relay knows of the message (summary, request
    /// profile, round trip), then the other properties in order. That takes one pass over the
    /// properties when `Profile` leads or there are none (as peers send them); when another
    /// property leads, a first pass looks for `Profile`.
    func message(_ event: MessageEvent, summary: String? = nil) -> LineBuilder {
        let message = event.message
        // Stamped with the time the message's last frame was read (its inspection may come later).
        var line = LineBuilder(json: format == .json, event: "message", time: event.time?.wall)
        line.int("session", Int(event.sessionID))
        line.directionAndType(event.direction, message.type)
        line.int("number", Int(message.number))
        line.flags(message.flags)
        if event.byRelay { line.word("by", "relay") }  // the relay's own reply, not the peer's
        var knownWritten = false
        var profileFollows = false
        message.properties.forEachRawPair { key, value in
            if Self.isProfileKey(key) {
                if !knownWritten {
                    line.raw("profile", value)
                    Self.known(event, summary: summary, to: &line)
                    knownWritten = true
                }
                return true
            }
            guard knownWritten else {
                profileFollows = true
                return false
            }
            Self.property(key, value, to: &line)
            return true
        }
        if profileFollows {
            message.properties.forEachRawPair { key, value in
                guard Self.isProfileKey(key) else { return true }
                line.raw("profile", value)
                return false  // the first Profile, as the peers read it
            }
        }
        if !knownWritten { Self.known(event, summary: summary, to: &line) }
        if profileFollows {
            message.properties.forEachRawPair { key, value in
                if !Self.isProfileKey(key) { Self.property(key, value, to: &line) }
                return true
            }
        }
        line.int("wireBytes", message.wirePayloadBytes)
        line.int("bodyBytes", message.bodyLength)
        if withBody, case .text(let text) = body(message.body) { line.text("body", text) }
        return line
    }

    /// What the relay knows of a message beyond its bytes.
    private static func known(_ event: MessageEvent, summary: String?, to line: inout LineBuilder) {
        // The event's optionals are read in place (chaining, unwrapping after a check): `if let`
        // would copy them out, a retain and release each.
        if let summary {
            line.text("summary", summary)
        } else if event.analysis != nil {
            line.text("summary", from: event, writtenBy: { event, buffer in event.analysis!.writeSummary(into: buffer) })
        }
        if event.requestProfile != nil { line.text("re", event.requestProfile!) }
        if let rtt = event.roundTrip { line.millis("rttMs", rtt.nanoseconds) }
    }

    /// A property other than `Profile`: redacted when its name looks like a credential, its
    /// value cut to ``maxValueLength`` bytes.
    private static func property(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, to line: inout LineBuilder) {
        if isSecret(key) {
            line.raw(key, UnsafeRawBufferPointer(start: nil, count: 0), redacted: true)
        } else {
            line.raw(key, UnsafeRawBufferPointer(rebasing: value.prefix(maxValueLength)))
        }
    }

    private static func isProfileKey(_ key: UnsafeRawBufferPointer) -> Bool { key.matches(.profile) }

    private func body(_ body: ByteBuffer) -> Value {
        if redactBodies {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            body.withUnsafeReadableBytes { for byte in $0 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 } }
            return .text("<\(body.readableBytes) B fnv1a64:\(String(hash, radix: 16))>")
        }
        let preview = body.getSlice(at: body.readerIndex, length: min(body.readableBytes, Self.maxBodyPreview))!
        return .text(String(decoding: preview.readableBytesView, as: UTF8.self))
    }

    func decodeError(_ id: UInt64, _ direction: BLIPDirection, _ error: RelayError) -> LineBuilder {
        fields([("event", .text("decode-error")), ("session", .int(Int(id))), ("dir", .text(direction.arrow)),
                ("error", .text(error.description))])
    }

    func frame(_ frame: FrameEvent) -> LineBuilder {
        fields([("event", .text("frame")), ("session", .int(Int(frame.sessionID))), ("dir", .text(frame.direction.arrow)),
                ("type", .text(frame.flags.type?.description ?? "?")), ("number", .int(Int(frame.number))),
                ("flags", .text(frame.flags.description)), ("wireBytes", .int(frame.wireBytes)),
                ("payloadBytes", .int(frame.payloadBytes))], time: frame.time)
    }

    func ack(_ id: UInt64, _ direction: BLIPDirection, _ ack: AckInfo, at time: ReceiptTime? = nil) -> LineBuilder {
        fields([("event", .text("ack")), ("session", .int(Int(id))), ("dir", .text(direction.arrow)),
                ("type", .text(ack.type.description)), ("number", .int(Int(ack.number))), ("bytes", .int(Int(ack.bytes)))],
               time: time)
    }

    func verdict(_ verdict: VerdictEvent) -> LineBuilder {
        fields([("event", .text("verdict")), ("session", .int(Int(verdict.sessionID))), ("dir", .text(verdict.direction.arrow)),
                ("type", .text(verdict.type.description)), ("number", .int(Int(verdict.number))),
                ("profile", verdict.profile.map { .text($0) } ?? .null), ("rule", verdict.rule.map { .text($0) } ?? .null),
                ("action", .text(verdict.action))])
    }

    func flow(_ id: UInt64, _ direction: BLIPDirection, _ paused: Bool) -> LineBuilder {
        fields([("event", .text(paused ? "read-paused" : "read-resumed")), ("session", .int(Int(id))),
                ("dir", .text(direction.arrow))])
    }

    // MARK: rendering

    enum Value {
        case text(String), int(Int), millis(Int64), null
    }

    /// Text: `time key=value …` (values with spaces quoted); JSON: one object per line.
    /// `time`: when what the line reports was read (nil: now).
    private func fields(_ list: [(StaticString, Value)], event: StaticString? = nil, time: ReceiptTime? = nil) -> LineBuilder {
        var line = LineBuilder(json: format == .json, event: event, time: time?.wall)
        for (key, value) in list {
            switch value {
            case .null: line.null(key)
            case .int(let number): line.int(key, number)
            case .millis(let nanos): line.millis(key, nanos)
            case .text(let text): line.text(key, text)
            }
        }
        return line
    }
}
