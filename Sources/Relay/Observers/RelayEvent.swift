import BLIPCore
import Mediation
import BLIPNIO
import enum Capture.CaptureLeg
import struct Capture.DecodedChunk
import NIOCore
import NIOHTTP1
import Replication

/// Which way traffic flows through the relay, in the log's own notation.
public typealias RelayDirection = BLIPDirection

extension BLIPDirection {
    /// `C→U` (client to upstream) or `U→C`.
    public var arrow: String { staticArrow.description }

    /// ``arrow`` as a static string: its bytes can be copied without making a String.
    public var staticArrow: StaticString { self == .clientToServer ? "C→U" : "U→C" }
}

/// Who a session belongs to, fixed at the handshake.
public struct SessionInfo: Sendable {
    public var id: UInt64
    /// Where the client is: its connection's peer, or the client a PROXY header named.
    public var client: ClientAddress
    /// The client's IP (``ClientAddress/ip``).
    public var clientAddress: String { client.ip }
    /// From Basic auth, or the name of the session cookie (`cookie:SyncGatewaySession`); nil when anonymous.
    public var user: String?
    public var database: String
    /// Request target as the client sent it (path and query).
    public var target: String
    /// The upstream URL the session went to (with several nodes: the node that upgraded it).
    public var upstream: String
    /// The Sync Gateway node that upgraded the session; nil until it did.
    public var node: UpstreamNode? = nil
    /// The sub-protocol the upstream chose.
    public var subprotocol: String?
    /// The client's upgrade request as received (secrets included: observers redact).
    public var request: NIOHTTP1.HTTPRequestHead? = nil
    /// The upstream's 101 answer as received.
    public var upstreamResponse: NIOHTTP1.HTTPResponseHead? = nil
    /// Sync Gateway's context ID for this replication: the 101's `X-Correlation-ID`, which
    /// prefixes each of its log lines for it (`c:[ID]`); nil when the upstream sent none.
    public var correlationID: String? { upstreamResponse?.headers.first(name: "X-Correlation-ID") }
    /// The client's TCP port, when known.
    public var clientPort: Int? { client.port }
    /// From dialing the upstream to its 101 answer.
    public var upstreamConnectTime: TimeAmount? = nil
    /// The session's replication analyzer, when an observer asked for
    /// ``RelayEventInterests/analysis``; fed on the session's event loop, safe to read anywhere.
    public var analyzer: SessionAnalyzer? = nil
}

/// One event of a session, as observers see it (ARCHITECTURE.md "Observers"). Events are built
/// only when some observer's ``RelayObserver/interests`` asks for their kind.
public enum RelayEvent: Sendable {
    /// The handshake succeeded; both WebSockets are open.
    case sessionOpened(SessionInfo)
    /// A handshake was answered with an HTTP error (the relay's own, or the upstream's passed on).
    case handshakeRefused(HandshakeRefusal)
    /// One WebSocket data message (one BLIP frame) was forwarded and decoded.
    case frame(FrameEvent)
    /// WebSocket data frames forwarded without being decoded (`relay --no-decode`, or a session
    /// whose decoding stopped), summed per socket read: how many and their payload bytes, for the
    /// ``RelayEventInterests/frames`` observers that count what ``frame(_:)`` would have shown.
    case forwarded(sessionID: UInt64, direction: BLIPDirection, frames: Int, bytes: Int)
    /// A message's properties are complete (its first frame, usually).
    case messageHead(sessionID: UInt64, direction: BLIPDirection, head: MessageHead, time: ReceiptTime? = nil)
    /// A message is complete. The relay lends messages to ``RelayObserver/observe(message:)``;
    /// this case is how its default hands them to ``RelayObserver/observe(_:)``.
    case message(MessageEvent)
    /// An ACK frame passed (wire-format reference §5).
    /// `time`: when the relay read it (nil: now, as the event is seen).
    case ack(sessionID: UInt64, direction: BLIPDirection, ack: AckInfo, time: ReceiptTime? = nil)
    /// Decoding failed; in pass-through the traffic was still forwarded unchanged.
    case decodeError(sessionID: UInt64, direction: BLIPDirection, error: RelayError)
    /// Reading from `side`'s source stopped (the other side's write buffer is full) or resumed.
    case flowControl(sessionID: UInt64, direction: BLIPDirection, paused: Bool)
    /// Both connections are closed.
    case sessionClosed(SessionSummary)
    /// A connection was closed before its request: it did not begin with an acceptable PROXY
    /// protocol header (``RelayConfiguration/proxyProtocol``).
    case proxyRefused(ProxyRefusal)
    /// A phase of the relay's drain (SIGTERM): not session-bound.
    case drain(DrainPhase)
    /// The session's mediation policy intervened in a message (denied, dropped, delayed, replaced
    /// or answered it).
    case verdict(VerdictEvent)
}

/// One intervention of a session's mediation policy.
public struct VerdictEvent: Sendable {
    public var sessionID: UInt64
    /// The way the message travelled.
    public var direction: BLIPDirection
    /// Its number as its sender gave it (a reply: its requester's number).
    public var number: MessageNumber
    public var type: MessageType
    /// The request's profile (a reply: the profile of the request it answers).
    public var profile: String?
    /// The rule that decided, when the policy named it.
    public var rule: String?
    /// What was done, for people: `deny 403`, `deny 403 + norev`, `drop`, `delay 250ms`,
    /// `replace`, `answer`, `hold-ack 2s`, `replyLatency 300ms` …
    public var action: String
    /// What kind of intervention it was (typed from the policy's rule, never parsed from ``action``).
    public var kind: VerdictKind
    /// Logged, not done (`--policy-dry-run`, `dryRun: true`).
    public var dryRun = false
    /// For a hold: how long; with ``rateLimited`` when a rate limit caused it.
    public var delay: TimeAmount? = nil
    public var rateLimited = false

    /// The mediator's report of an intervention in session `sessionID`.
    public init(sessionID: UInt64, report: MediationReport) {
        self.sessionID = sessionID
        self.direction = report.direction
        self.number = report.number
        self.type = report.type
        self.profile = report.profile
        self.rule = report.rule
        self.action = report.action
        self.kind = report.kind
        self.dryRun = report.dryRun
        self.delay = report.delay
        self.rateLimited = report.rateLimited
    }

    /// The action as a metric label: `deny`, `drop`, `delay`, `modify`, `fault`, or `dry_run`.
    public var metricAction: String { dryRun ? "dry_run" : kind.rawValue }
}

public struct HandshakeRefusal: Sendable {
    public var client: ClientAddress
    /// The client's IP (``ClientAddress/ip``).
    public var clientAddress: String { client.ip }
    public var target: String
    public var status: HTTPResponseStatus
    /// Why: the relay's error, or "upstream answered …".
    public var reason: String
    /// Set when dialling the upstream failed or the upstream refused the upgrade.
    public var upstreamFailure: UpstreamFailure? = nil
    /// Set when a connection rule of the policy refused the session: that rule's verdict.
    public var policyRule: String? = nil
}

public struct FrameEvent: Sendable {
    public var sessionID: UInt64
    public var direction: BLIPDirection
    public var number: MessageNumber
    public var flags: FrameFlags
    /// BLIP frame bytes as sent (header, payload, checksum).
    public var wireBytes: Int
    /// Uncompressed payload bytes.
    public var payloadBytes: Int
    /// The BLIP frame (one WebSocket message payload, unmasked), only for observers with
    /// ``RelayEventInterests/frameBytes``; shares storage with the relay's copy (no extra copy).
    public var bytes: ByteBuffer? = nil
    /// Which of the session's two connections carried these bytes: both while the relay forwards
    /// the direction unchanged; once it re-encodes, a received frame was on its sender's leg only
    /// and a frame the relay built on its receiver's leg only.
    public var leg: CaptureLeg = .both
    /// With ``RelayEventInterests/frameReadings``: the decoder's reading of this frame (its
    /// uncompressed payload and the CRC before it), for a frame it decoded while forwarding
    /// unchanged; nil otherwise (ACKs, frames it could not read, mediated sessions).
    public var decoded: DecodedChunk? = nil
    /// When the relay read the frame (nil: now, as the event is seen).
    public var time: ReceiptTime? = nil
}

public struct MessageEvent: Sendable {
    public var sessionID: UInt64
    public var direction: BLIPDirection
    public var message: BLIPMessage
    /// For a reply: the request's profile and the time since the request's first frame passed.
    public var requestProfile: String?
    public var roundTrip: TimeAmount?
    /// The session analyzer's reading of the message (``RelayEventInterests/analysis``).
    public var analysis: AnalyzedMessage? = nil
    /// The relay sent this reply itself (a mediation policy answered a request it withheld): it
    /// travelled `direction` from the relay, not from that side's peer.
    public var byRelay = false
    /// When the relay read the message's last frame (nil: now, as the event is seen).
    public var time: ReceiptTime? = nil
}

public struct SessionSummary: Sendable {
    public var info: SessionInfo
    /// The CLOSE each side sent (``WebSocketClose/abnormal`` for a TCP drop), nil if none was seen.
    public var clientClose: WebSocketClose?
    public var upstreamClose: WebSocketClose?
    /// The relay's reason for ending the session, if it did.
    public var relayError: RelayError?
    public var statistics: SessionStatistics
    /// The replication analyzer's summary of the session (``RelayEventInterests/analysis``).
    public var replication: ReplicationSummary? = nil
}

/// Counters of one session, by direction (index with `BLIPDirection.rawValue`).
public struct SessionStatistics: Sendable {
    public var sessionID: UInt64 = 0
    public var framesForwarded = [0, 0]
    public var bytesForwarded = [0, 0]
    public var messagesDecoded = [0, 0]
    public var decodeErrors = [0, 0]
    /// Largest outbound buffer seen on the channel each direction writes to, measured after a
    /// flush that left the channel above its high-water mark (0: it never got there).
    public var maxBufferedBytes = [0, 0]
    /// Times reading was paused for back-pressure.
    public var flowPauses = [0, 0]
    /// Per direction: read batches that ended inside a frame, after which the relay asked its
    /// kernel to acknowledge the sender's bytes at once (``RelayLimits/acknowledgeMidFrame``).
    public var immediateAcks = [0, 0]
    /// Most bytes a mediating session held at once waiting for timers (delayed messages, withheld
    /// ACKs), per direction; bounded by ``MediationLimits/maxDelayedBytes`` plus one read's worth.
    public var maxDelayedBytes = [0, 0]
    /// False once the decoder has been given up (budget exceeded, or a fatal decode error).
    public var decoding = true
    /// Requests whose replies the decoders stopped waiting for, because more than
    /// ``BLIPLimits/maxAwaitedReplies`` were outstanding: their replies were not paired.
    public var unpairedReplies = 0
}
