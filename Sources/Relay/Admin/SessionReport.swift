import BLIPCore
import Replication

/// One live session as `/sessions` shows it (JSON).
struct SessionReport: Encodable, Sendable {
    var id: UInt64
    var user: String?
    var database: String
    var subprotocol: String?
    var clientAddress: String
    var upstream: String
    /// The Sync Gateway node (`host:port`) the session went to.
    var node: String?
    /// Seconds since 1970 (UTC) when the handshake completed.
    var startTime: Double
    var durationSeconds: Double
    var messagesFromClient: Int
    var messagesFromUpstream: Int
    var bytesFromClient: Int
    var bytesFromUpstream: Int
    /// Every finding once (``SessionAnalyzer/allFindings(now:)``): violations, standing findings
    /// with their running count, and the timed stuck rules now.
    var findings: [Finding]

    init(_ track: SessionTrack, now: Double) {
        let counts = track.snapshot()
        id = track.info.id
        user = track.info.user
        database = track.info.database
        subprotocol = track.info.subprotocol
        clientAddress = track.info.clientAddress
        upstream = track.info.upstream
        node = track.info.node?.label
        startTime = track.startedWallClock
        durationSeconds = max(0, now - track.started)
        messagesFromClient = counts.messages[0]
        messagesFromUpstream = counts.messages[1]
        bytesFromClient = counts.bytes[0]
        bytesFromUpstream = counts.bytes[1]
        findings = track.analyzer.allFindings(now: now)
    }
}

/// `/sessions/{id}`: the session, its analyzer summary and its recent messages.
struct SessionDetail: Encodable, Sendable {
    struct TimelineEntry: Encodable, Sendable {
        /// Seconds since the session started.
        var t: Double
        var direction: String
        var type: String
        var number: MessageNumber
        var profile: String?
        var bytes: Int
        var latencySeconds: Double?
    }

    var session: SessionReport
    var summary: ReplicationSummary
    var timeline: [TimelineEntry]

    init(_ track: SessionTrack, now: Double) {
        session = SessionReport(track, now: now)
        summary = track.analyzer.summary()
        timeline = track.snapshot().recent.map {
            TimelineEntry(t: $0.time - track.started, direction: $0.direction.arrow, type: "\($0.type)",
                          number: $0.number, profile: $0.profile, bytes: $0.bytes, latencySeconds: $0.latency)
        }
    }
}
