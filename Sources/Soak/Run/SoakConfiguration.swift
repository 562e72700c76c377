/// Everything `blipscope-bench soak` can be told, with its defaults.
public struct SoakConfiguration: Sendable {
    /// Numbered echo messages to send in all (replication sessions come on top).
    public var messages = 10_000_000
    /// Sessions open at once; each slot runs one session after another until the budget is spent.
    public var sessions = 200
    /// Most numbered messages one session sends before it closes and a new one takes its slot:
    /// sessions churn, so what a session leaks shows. Each session picks between half of its
    /// share and its share (``sessionShare``), its kind's ``SessionKind/share`` of that.
    public var maxMessagesPerSession = 2_000
    /// Seconds between readings of the relay's RSS and descriptors (and capture sweeps).
    public var sampleSeconds = 5.0
    /// The share of the messages echoed before the reading that later ones are compared with.
    public var warmUpShare = 0.10
    /// Every this many session starts, one is a one-shot pull from the embedded gateway instead.
    public var replicationEvery = 10
    /// Documents in the gateway's database, each pulled by every replication session.
    public var replicationDocuments = 100
    /// The relay starts a new part of a session's capture at this size (`--capture-max-file-bytes`).
    public var captureMaxFileMiB = 4
    /// One capture file in this many is read back, record by record, before it is removed.
    public var readBackEvery = 25
    /// A session's clean close (or a replication) must finish within this many seconds.
    public var sessionTimeoutSeconds = 60.0
    /// Once the budget is spent, how long the relay may take to close its last sessions and give
    /// back their descriptors before the idle sample is taken (a busy machine is slower).
    public var idleSettleSeconds = 60.0
    /// Seeds the choice of session kinds, sizes and compression.
    public var seed: UInt64 = 1
    public var target = SoakTarget()

    public init() {}

    /// A session's numbered messages before its kind's share: enough sessions that every slot
    /// turns over several times (at least 8 budgets' worth), at least 20, at most
    /// ``maxMessagesPerSession``.
    public var sessionShare: Int {
        let perSlot = messages / max(1, sessions * 8)
        return max(1, min(maxMessagesPerSession, max(20, perSlot)))
    }

    /// The largest message number a session may carry.
    public var messageNumberLimit: UInt64 { UInt64(max(maxMessagesPerSession, sessionShare)) }
}
