/// The HELP line of every metric in ``MetricNames``: what a user reads next to the series in
/// Prometheus and Grafana (`promtool check metrics` requires one). A test checks that every
/// name has one.
public enum MetricHelp {
    public static let text: [String: String] = [
        MetricNames.sessionsActive: "Relay sessions now open, by database and sub-protocol.",
        MetricNames.sessionsTotal: "Relay sessions opened, by database and sub-protocol.",
        MetricNames.sessionsClosedTotal: "Relay sessions ended, by database and how they closed.",
        MetricNames.handshakesTotal: "WebSocket handshakes answered, by HTTP status (101 for an upgrade).",
        MetricNames.upstreamConnectSeconds: "Seconds from dialing the upstream to its 101 answer.",
        MetricNames.upstreamConnectFailuresTotal: "Upstream dials that failed: unreachable (502), timeout (504), refused.",
        MetricNames.messagesTotal: "Complete BLIP messages relayed, by direction, type and profile.",
        MetricNames.framesTotal: "BLIP frames forwarded, by direction.",
        MetricNames.wireBytesTotal: "BLIP frame bytes on the wire (compressed as sent), by direction.",
        MetricNames.payloadBytesTotal: "BLIP frame payload bytes after inflating, by direction.",
        MetricNames.requestDurationSeconds: "Seconds from a request to its reply, by the request's profile.",
        MetricNames.errorRepliesTotal: "ERR replies, by the request's profile, error domain and code.",
        MetricNames.documentsTotal: "Documents announced in changes and proposeChanges entries, by direction.",
        MetricNames.revisionsTotal: "Revisions sent (rev, putRev), by direction.",
        MetricNames.tombstonesTotal: "Deleted revisions (tombstones) sent, by direction.",
        MetricNames.attachmentBytesTotal: "Attachment bytes sent in getAttachment replies, by direction.",
        MetricNames.conflictsTotal: "Conflicts (409 answers), by profile.",
        MetricNames.policyVerdictsTotal: "Policy verdicts carried out, by rule and action.",
        MetricNames.rateLimitDelaySeconds: "Seconds a message was held back by a rate limit, by rule.",
        MetricNames.stuckSessions: "Live sessions the replication analyzer finds stuck, by reason.",
        MetricNames.captureRecordsTotal: "Capture records written to .blipcap files.",
        MetricNames.captureBytesTotal: "Capture bytes written to .blipcap files.",
        MetricNames.captureDroppedTotal: "Capture records dropped because the disk did not keep up.",
        MetricNames.decodeFailuresTotal: "BLIP decoding failures (traffic was still forwarded), by direction and kind.",
        MetricNames.userMessagesTotal: "BLIP messages by user and direction (only with --metrics-user-labels).",
        MetricNames.userWireBytesTotal: "Wire bytes by user and direction (only with --metrics-user-labels).",
    ]
}
