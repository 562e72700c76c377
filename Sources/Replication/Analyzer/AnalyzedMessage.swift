import BLIPCore
import Foundation

/// What the analyzer made of one message: its typed view, the reply latency, and any findings
/// it raised. ``summary`` is the relay's log line.
public struct AnalyzedMessage: Sendable {
    /// The typed message, held in the box the analyzer keeps for a pending request, so
    /// returning it copies nothing.
    private var box: RequestBox
    public var from: BLIPDirection
    public var time: Double
    /// For a reply: seconds since its request completed.
    public var latency: Double?
    /// Findings this message raised (each finding is raised once, when it is first made).
    public var findings: [Finding]
    /// True when the message raised, re-opened or ended a standing finding
    /// (``Finding/Kind/isStanding``): the session's ``SessionAnalyzer/standingStuckReasons`` changed.
    public var changesStuckReasons: Bool

    /// True for an ERR that is the normal answer, not an error: a new client's first
    /// getCheckpoint answered 404. Summaries list it apart and do not count it as an error.
    public var isExpectedError: Bool

    init(box: RequestBox, from: BLIPDirection, time: Double, latency: Double?, findings: [Finding],
         changesStuckReasons: Bool = false, isExpectedError: Bool = false) {
        self.box = box
        self.from = from
        self.time = time
        self.latency = latency
        self.findings = findings
        self.changesStuckReasons = changesStuckReasons
        self.isExpectedError = isExpectedError
    }

    /// Estimated bytes keeping this reading costs: the typed message's own content
    /// (``ReplicationMessage/retainedBytes``) and the findings it raised.
    public var retainedBytes: Int {
        box.withMessage { $0.retainedBytes } + RetainedSize.array(findings) { finding in
            RetainedSize.string(finding.profile) + RetainedSize.string(finding.docID) + RetainedSize.string(finding.message)
        }
    }

    public var message: ReplicationMessage {
        get { box.message }
        set { box = RequestBox(newValue) }
    }

    public var summary: String { box.withMessage { $0.summary } }

    /// The message's profile (a reply: its request's), read in place.
    public var profile: String? { box.profile }

    /// ``summary`` written into `buffer` (``ReplicationMessage/writeSummary(into:)``): its length,
    /// written only when it fits.
    public func writeSummary(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        box.withMessage { $0.writeSummary(into: buffer) }
    }

    /// Reads the typed message in place (``message`` returns a copy of it).
    public func withMessage<T>(_ body: (borrowing ReplicationMessage) -> T) -> T { box.withMessage(body) }
}

/// JSON text for the analyzer's results (`inspect --json`): one compact object, keys sorted.
public enum ReplicationJSON {
    public static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
