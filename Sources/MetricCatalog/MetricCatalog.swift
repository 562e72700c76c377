/// Every metric BlipScope exports, each defined once: name, type, labels and HELP text. The
/// relay's registry, the dashboards' and alert rules' test and the soak's reading of a scrape
/// all read this table (dashboards/ is checked against it).
///
/// Labels are bounded: directions, message types and the known replication profiles are fixed
/// sets (unknown profiles are `other`); databases, error codes and close reasons are capped by
/// the relay's `maxLabelValues` (then `other`), as are Sync Gateway nodes (`host:port`, from the
/// configuration). Document IDs never become labels; user names
/// only with `--metrics-user-labels`.
public enum MetricCatalog {
    // Each definition's HELP text says what it counts; its labels are every series' labels.
    public static let sessionsActive = MetricDefinition(
        "blipscope_sessions_active", .gauge, labels: ["database", "subprotocol"],
        help: "Relay sessions now open, by database and sub-protocol.")
    public static let sessionsTotal = MetricDefinition(
        "blipscope_sessions_total", .counter, labels: ["database", "subprotocol"],
        help: "Relay sessions opened, by database and sub-protocol.")
    public static let sessionsClosedTotal = MetricDefinition(
        "blipscope_sessions_closed_total", .counter, labels: ["database", "close_reason"],
        help: "Relay sessions ended, by database and how they closed.")
    public static let handshakesTotal = MetricDefinition(
        "blipscope_handshakes_total", .counter, labels: ["status"],
        help: "WebSocket handshakes answered, by HTTP status (101 for an upgrade).")
    public static let upstreamConnectSeconds = MetricDefinition(
        "blipscope_upstream_connect_seconds", .histogram, labels: [],
        help: "Seconds from dialing the upstream to its 101 answer.")
    public static let upstreamConnectFailuresTotal = MetricDefinition(
        "blipscope_upstream_connect_failures_total", .counter, labels: ["reason"],
        help: "Upstream dials that failed: unreachable, timeout, refused (the upstream's own answer), handshake (a 101 the relay cannot accept).")
    public static let upstreamNodeSessionsActive = MetricDefinition(
        "blipscope_upstream_node_sessions_active", .gauge, labels: ["node"],
        help: "Relay sessions now open on each Sync Gateway node (host:port).")
    public static let upstreamNodeSessionsTotal = MetricDefinition(
        "blipscope_upstream_node_sessions_total", .counter, labels: ["node"],
        help: "Relay sessions opened on each Sync Gateway node (host:port).")
    public static let upstreamNodeUp = MetricDefinition(
        "blipscope_upstream_node_up", .gauge, labels: ["node"],
        help: "Whether each Sync Gateway node (host:port) is up (1) or down (0) by the relay's health checks.")
    public static let upstreamNodeCheckFailuresTotal = MetricDefinition(
        "blipscope_upstream_node_check_failures_total", .counter, labels: ["node"],
        help: "Failed health checks (GET /) of each Sync Gateway node (host:port).")
    public static let upstreamNodeSkipsTotal = MetricDefinition(
        "blipscope_upstream_node_skips_total", .counter, labels: ["node", "reason"],
        help: "Session dials passed from a node to the next one, by node and why: unreachable, timeout, refused (a 5xx), handshake.")
    public static let proxyProtocolRefusalsTotal = MetricDefinition(
        "blipscope_proxy_protocol_refusals_total", .counter, labels: ["reason"],
        help: "Client connections closed before their request for want of an acceptable PROXY protocol header (--proxy-protocol): not_proxy, malformed, unsupported, too_long, timeout, incomplete.")
    public static let messagesTotal = MetricDefinition(
        "blipscope_messages_total", .counter, labels: ["direction", "type", "profile"],
        help: "Complete BLIP messages relayed, by direction, type and profile.")
    public static let framesTotal = MetricDefinition(
        "blipscope_frames_total", .counter, labels: ["direction"],
        help: "BLIP frames forwarded, by direction.")
    public static let wireBytesTotal = MetricDefinition(
        "blipscope_wire_bytes_total", .counter, labels: ["direction"],
        help: "BLIP frame bytes on the wire (compressed as sent), by direction.")
    public static let payloadBytesTotal = MetricDefinition(
        "blipscope_payload_bytes_total", .counter, labels: ["direction"],
        help: "BLIP frame payload bytes after inflating, by direction.")
    public static let requestDurationSeconds = MetricDefinition(
        "blipscope_request_duration_seconds", .histogram, labels: ["profile"],
        help: "Seconds from a request to its reply, by the request's profile.")
    public static let errorRepliesTotal = MetricDefinition(
        "blipscope_error_replies_total", .counter, labels: ["profile", "domain", "code"],
        help: "ERR replies, by the request's profile, error domain and code.")
    public static let documentsTotal = MetricDefinition(
        "blipscope_documents_total", .counter, labels: ["direction"],
        help: "Documents announced in changes and proposeChanges entries, by direction.")
    public static let revisionsTotal = MetricDefinition(
        "blipscope_revisions_total", .counter, labels: ["direction"],
        help: "Revisions sent (rev, putRev), by direction.")
    public static let tombstonesTotal = MetricDefinition(
        "blipscope_tombstones_total", .counter, labels: ["direction"],
        help: "Deleted revisions (tombstones) sent, by direction.")
    public static let attachmentBytesTotal = MetricDefinition(
        "blipscope_attachment_bytes_total", .counter, labels: ["direction"],
        help: "Attachment bytes sent in getAttachment replies, by direction.")
    public static let conflictsTotal = MetricDefinition(
        "blipscope_conflicts_total", .counter, labels: ["profile"],
        help: "Conflicts (409 answers), by profile.")
    public static let policyVerdictsTotal = MetricDefinition(
        "blipscope_policy_verdicts_total", .counter, labels: ["rule", "action"],
        help: "Policy verdicts carried out, by rule and action.")
    public static let rateLimitDelaySeconds = MetricDefinition(
        "blipscope_rate_limit_delay_seconds", .histogram, labels: ["rule"],
        help: "Seconds a message was held back by a rate limit, by rule.")
    public static let stuckSessions = MetricDefinition(
        "blipscope_stuck_sessions", .gauge, labels: ["reason"],
        help: "Live sessions the replication analyzer finds stuck, by reason.")
    public static let captureRecordsTotal = MetricDefinition(
        "blipscope_capture_records_total", .counter, labels: [],
        help: "Capture records written to .blipcap files.")
    public static let captureBytesTotal = MetricDefinition(
        "blipscope_capture_bytes_total", .counter, labels: [],
        help: "Capture bytes written to .blipcap files.")
    public static let captureDroppedTotal = MetricDefinition(
        "blipscope_capture_dropped_total", .counter, labels: [],
        help: "Capture records dropped because the disk did not keep up.")
    public static let decodeFailuresTotal = MetricDefinition(
        "blipscope_decode_failures_total", .counter, labels: ["direction", "kind"],
        help: "BLIP decoding failures (traffic was still forwarded), by direction and kind.")
    public static let userMessagesTotal = MetricDefinition(
        "blipscope_user_messages_total", .counter, labels: ["user", "direction"], optIn: true,
        help: "BLIP messages by user and direction (only with --metrics-user-labels).")
    public static let userWireBytesTotal = MetricDefinition(
        "blipscope_user_wire_bytes_total", .counter, labels: ["user", "direction"], optIn: true,
        help: "Wire bytes by user and direction (only with --metrics-user-labels).")
    public static let fleetLimitsDegraded = MetricDefinition(
        "blipscope_fleet_limits_degraded", .gauge, labels: [],
        help: "1 while the fleet's Redis does not answer and scope: fleet limits are kept locally (limit ÷ live relays), else 0.")
    public static let fleetLimitsFallbacksTotal = MetricDefinition(
        "blipscope_fleet_limits_fallbacks_total", .counter, labels: [],
        help: "Times the fleet limits fell back to local limits because Redis failed or was too slow.")

    /// Every metric above (histograms appear in a scrape as `_bucket`, `_sum`, `_count`).
    public static let all: [MetricDefinition] = [
        sessionsActive, sessionsTotal, sessionsClosedTotal, handshakesTotal, upstreamConnectSeconds, upstreamConnectFailuresTotal, proxyProtocolRefusalsTotal, upstreamNodeSessionsActive, upstreamNodeSessionsTotal, upstreamNodeUp, upstreamNodeCheckFailuresTotal, upstreamNodeSkipsTotal, messagesTotal, framesTotal, wireBytesTotal, payloadBytesTotal, requestDurationSeconds, errorRepliesTotal, documentsTotal, revisionsTotal, tombstonesTotal, attachmentBytesTotal, conflictsTotal, policyVerdictsTotal, rateLimitDelaySeconds, stuckSessions, captureRecordsTotal, captureBytesTotal, captureDroppedTotal, decodeFailuresTotal, userMessagesTotal, userWireBytesTotal, fleetLimitsDegraded, fleetLimitsFallbacksTotal,
    ]

    /// The definition named `name`.
    public static func named(_ name: String) -> MetricDefinition? { byName[name] }

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
