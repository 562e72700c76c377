import BLIPCore
import Capture
import NIOCore
import Replication

/// One message as the web view keeps it: cheap to make on the relay's hot path (numbers, the
/// analyzer's reading held by reference, small copies of the properties and of the body's
/// start), turned into text only when a viewer asks (``MessageRow``, ``MessageDetail``).
///
/// The copies matter: a decoded message's properties and body share storage with the whole
/// received stream, which keeping a slice would hold on to.
public struct MessageRecord: Sendable {
    /// The message's index in its session, from 0; never reused.
    public var seq: Int
    /// Seconds on the session's monotonic clock.
    public var time: Double
    public var direction: BLIPDirection
    public var type: MessageType
    public var number: MessageNumber
    public var flags: FrameFlags
    /// The message's profile (a reply: its request's).
    public var profile: String?
    /// The analyzer's reading (summary, typed content, findings), when an analyzer read it and
    /// the session's budget for readings had room (``WebViewLimits/maxAnalysisBytesPerSession``).
    public var analysis: AnalyzedMessage?
    /// What keeping ``analysis`` costs, as counted against that budget.
    var analysisBytes = 0
    /// Payload bytes as they crossed the wire (deflated when compressed).
    public var wireBytes: Int
    /// Uncompressed stream bytes: length varint, properties and body.
    public var streamBytes: Int
    public var bodyBytes: Int
    public var frameCount: Int
    /// Its frames and ACKs (nil for a message whole in one frame and never ACKed). Held in a
    /// one-element array so a record stays small for the common case.
    private var carried: [MessageCarriage] = []
    public internal(set) var carriage: MessageCarriage? {
        get { carried.first }
        set { carried = newValue.map { [$0] } ?? [] }
    }
    /// For a reply: seconds since its request (NaN when unknown).
    public var roundTrip: Double = .nan
    /// The other half of a request/reply pair: its ``seq``, -1 when not seen (yet).
    public var link: Int = -1
    /// What the record copied from the message, in one allocation: the properties block
    /// (`uvarint(P) || block`, its first ``propertiesLength`` bytes) followed by the first
    /// ``WebViewLimits/bodyPreviewBytes`` of the body.
    private var copies: [UInt8] = []
    /// -1 when the properties were larger than ``WebViewLimits/maxPropertyBytes`` (not kept).
    private var propertiesLength: Int32 = -1
    var propertyCount: Int
    /// The relay answered this itself (a mediation policy), it did not come from a peer.
    public var byRelay = false
    /// The row's JSON once a viewer formatted it, shared by every viewer after it (cleared when
    /// the row changes: its pair arrived).
    var row: String?

    /// Makes the record of `message`; copies at most `previewBytes` of its body.
    init(seq: Int, time: Double, direction: BLIPDirection, message: BLIPMessage, profile: String?,
         analysis: AnalyzedMessage?, roundTrip: Double?, previewBytes: Int, maxPropertyBytes: Int, byRelay: Bool) {
        self.seq = seq
        self.time = time
        self.direction = direction
        self.type = message.type
        self.number = message.number
        self.flags = message.flags
        self.profile = profile
        self.analysis = analysis
        self.wireBytes = message.wirePayloadBytes
        self.bodyBytes = message.bodyLength
        self.streamBytes = message.streamBytes > 0
            ? message.streamBytes : message.properties.encodedSize + 1 + message.bodyLength
        self.frameCount = message.frameCount
        self.roundTrip = roundTrip ?? .nan
        self.byRelay = byRelay
        let properties = message.properties
        let size = properties.encodedSize
        propertyCount = properties.count
        let keepsProperties = size <= maxPropertyBytes
        // A body its decoder did not keep has nothing to preview.
        let previewLength = previewBytes > 0 ? min(previewBytes, message.body.readableBytes) : 0
        guard keepsProperties || previewLength > 0 else { return }
        copies.reserveCapacity((keepsProperties ? size + 10 : 0) + previewLength)
        if keepsProperties {
            properties.encode(appendingTo: &copies)
            propertiesLength = Int32(copies.count)
        }
        // Typed, so that the append is one copy rather than a byte at a time.
        message.body.withUnsafeReadableBytes { raw in
            copies.append(contentsOf: UnsafeBufferPointer(rebasing: raw.assumingMemoryBound(to: UInt8.self).prefix(previewLength)))
        }
    }

    public var isError: Bool { type == .error }
    /// ACKs the receiver sent for it (BLIP §5), kept or not.
    public var acks: Int { carriage.map { $0.acks.count + $0.acksNotKept } ?? 0 }
    public var previewBytes: Int { copies.count - max(0, Int(propertiesLength)) }
    /// What this record copied from the message: its preview and its properties block; counted
    /// against ``WebViewLimits/maxCopiedBytesPerSession``.
    public var copiedBytes: Int { copies.count }

    /// The properties, secrets replaced (``PropertyRedaction``); nil when they were too large to keep.
    public var redactedProperties: [(key: String, value: String)]? {
        guard propertiesLength >= 0 else { return nil }
        var block = ByteBuffer(bytes: copies.prefix(Int(propertiesLength)))
        guard let properties = try? Properties.decode(from: &block) else { return nil }
        return PropertyRedaction.redact(properties).pairs
    }

    /// The kept start of the body.
    public var bodyPreview: [UInt8] { Array(copies.dropFirst(max(0, Int(propertiesLength)))) }

    /// The summary in protocol terms, formatted now.
    public var summary: String {
        if let analysis { return analysis.summary }
        return "\(type)#\(number)" + (profile.map { " \($0)" } ?? "")
    }

    /// Document IDs the message names (changes entries, a rev, a norev…), at most `limit`.
    public func documentIDs(limit: Int = .max) -> [String] {
        guard let analysis else { return [] }
        return analysis.withMessage { MessageDocuments.ids(in: $0, limit: limit) }
    }
}
