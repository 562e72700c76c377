/// Every metric BlipScope exports, in one place (ARCHITECTURE.md "Files a user touches": the
/// dashboards and alert rules in `dashboards/` are checked against this list by a test).
///
/// Labels are bounded: directions, message types and the known replication profiles are fixed
/// sets (unknown profiles are `other`); databases, error codes and close reasons are capped by
/// ``RelayMetrics/maxLabelValues`` (then `other`). Document IDs never become labels; user names
/// only with `--metrics-user-labels`.
public enum MetricNames {
    /// Gauge {database, subprotocol}: sessions now open.
    public static let sessionsActive = "blipscope_sessions_active"
    /// Counter {database, subprotocol}: sessions opened.
    public static let sessionsTotal = "blipscope_sessions_total"
    /// Counter {database, close_reason}: sessions ended, by who closed and how.
    public static let sessionsClosedTotal = "blipscope_sessions_closed_total"
    /// Counter {status}: WebSocket handshakes answered (101, or the HTTP error).
    public static let handshakesTotal = "blipscope_handshakes_total"
    /// Histogram: seconds from dialing the upstream to its 101 (successful sessions).
    public static let upstreamConnectSeconds = "blipscope_upstream_connect_seconds"
    /// Counter {reason}: upstream dials that failed, by ``UpstreamFailure``: `unreachable`, `timeout`,
    /// `refused` (the upstream's own non-101 answer), `handshake` (a 101 the relay cannot accept).
    public static let upstreamConnectFailuresTotal = "blipscope_upstream_connect_failures_total"
    /// Counter {direction, type, profile}: complete BLIP messages.
    public static let messagesTotal = "blipscope_messages_total"
    /// Counter {direction}: BLIP frames forwarded.
    public static let framesTotal = "blipscope_frames_total"
    /// Counter {direction}: BLIP frame bytes on the wire (compressed as sent).
    public static let wireBytesTotal = "blipscope_wire_bytes_total"
    /// Counter {direction}: frame payload bytes after inflating.
    public static let payloadBytesTotal = "blipscope_payload_bytes_total"
    /// Histogram {profile}: request → reply seconds, by the request's profile.
    public static let requestDurationSeconds = "blipscope_request_duration_seconds"
    /// Counter {profile, domain, code}: ERR replies.
    public static let errorRepliesTotal = "blipscope_error_replies_total"
    /// Counter {direction}: documents announced in changes / proposeChanges entries.
    public static let documentsTotal = "blipscope_documents_total"
    /// Counter {direction}: revisions sent (rev, putRev).
    public static let revisionsTotal = "blipscope_revisions_total"
    /// Counter {direction}: deleted revisions (tombstones) sent.
    public static let tombstonesTotal = "blipscope_tombstones_total"
    /// Counter {direction}: attachment bytes sent (getAttachment replies).
    public static let attachmentBytesTotal = "blipscope_attachment_bytes_total"
    /// Counter {profile}: conflicts, 409 error replies.
    public static let conflictsTotal = "blipscope_conflicts_total"
    /// Counter {rule, action}: policy verdicts (issue 7's policy engine reports them).
    public static let policyVerdictsTotal = "blipscope_policy_verdicts_total"
    /// Histogram {rule}: seconds a request was held back by a rate limit.
    public static let rateLimitDelaySeconds = "blipscope_rate_limit_delay_seconds"
    /// Gauge {reason}: live sessions the analyzer reports stuck, polled every few seconds.
    public static let stuckSessions = "blipscope_stuck_sessions"
    /// Counter: capture records written.
    public static let captureRecordsTotal = "blipscope_capture_records_total"
    /// Counter: capture bytes written.
    public static let captureBytesTotal = "blipscope_capture_bytes_total"
    /// Counter: capture records dropped because the writer could not keep up.
    public static let captureDroppedTotal = "blipscope_capture_dropped_total"
    /// Counter {direction, kind}: decoding failures (traffic was still forwarded).
    public static let decodeFailuresTotal = "blipscope_decode_failures_total"
    /// Counter {user, direction}: messages by user; only with `--metrics-user-labels`.
    public static let userMessagesTotal = "blipscope_user_messages_total"
    /// Counter {user, direction}: wire bytes by user; only with `--metrics-user-labels`.
    public static let userWireBytesTotal = "blipscope_user_wire_bytes_total"

    /// Every name above (histograms appear in a scrape as `_bucket`, `_sum`, `_count`).
    public static let all: [String] = [
        sessionsActive, sessionsTotal, sessionsClosedTotal, handshakesTotal, upstreamConnectSeconds,
        upstreamConnectFailuresTotal, messagesTotal, framesTotal, wireBytesTotal, payloadBytesTotal,
        requestDurationSeconds, errorRepliesTotal, documentsTotal, revisionsTotal, tombstonesTotal,
        attachmentBytesTotal, conflictsTotal, policyVerdictsTotal, rateLimitDelaySeconds, stuckSessions,
        captureRecordsTotal, captureBytesTotal, captureDroppedTotal, decodeFailuresTotal,
        userMessagesTotal, userWireBytesTotal,
    ]

    /// Names present only when the operator opts into user labels.
    public static let optIn: Set<String> = [userMessagesTotal, userWireBytesTotal]
}
