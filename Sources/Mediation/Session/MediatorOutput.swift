import BLIPCore
import NIOCore

/// One WebSocket binary message the session must send.
public struct MediatedSend: Sendable {
    public enum Payload: Sendable {
        /// Forward the received WebSocket frame unchanged, mask and all (pass-through).
        case original
        /// A new BLIP frame (unmasked): the shell frames it as a WebSocket binary message,
        /// masked toward the upstream.
        case bytes(ByteBuffer)
    }

    /// The way it travels.
    public var direction: BLIPDirection
    public var payload: Payload
}

/// A timer the shell must arm; when it fires, call ``SessionMediator/timerFired(_:now:)``.
public struct MediationTimer: Sendable, Equatable {
    public var token: UInt64
    public var delay: TimeAmount
}

/// One intervention, for logs, metrics and capture.
public struct MediationReport: Sendable, Equatable {
    public var direction: BLIPDirection
    /// The message's number as its sender gave it (a reply: its requester's number).
    public var number: MessageNumber
    public var type: MessageType
    public var profile: String?
    public var rule: String?
    /// What was done, for people: `deny 403`, `deny 403 + norev` (a refused `rev`,
    /// ``NoRevNotice``), `drop`, `delay 250ms`, `replace`, `answer`, `hold-ack 2s`.
    public var action: String
    /// What kind of intervention it was, typed (metrics key on this, never on ``action``).
    public var kind: VerdictKind
    /// For a hold: how long, and whether a rate limit caused it.
    public var delay: TimeAmount? = nil
    public var rateLimited = false
    /// Reported, not done (a policy's dry run).
    public var dryRun = false

    public init(direction: BLIPDirection, number: MessageNumber, type: MessageType, profile: String?, rule: String?,
                action: String, kind: VerdictKind, delay: TimeAmount? = nil, rateLimited: Bool = false,
                dryRun: Bool = false) {
        self.direction = direction
        self.number = number
        self.type = type
        self.profile = profile
        self.rule = rule
        self.action = action
        self.kind = kind
        self.delay = delay
        self.rateLimited = rateLimited
        self.dryRun = dryRun
    }
}

/// A reply the relay sent on its own (a policy's ERR, or its answer in the peer's place), as
/// the message it encoded: observers read it as what its receiver got, with nothing parsed back
/// from the frames.
public struct RelayAnswer: Sendable {
    /// The way it travels.
    public var direction: BLIPDirection
    /// Numbered as the receiver knows the request it answers; ``BLIPMessage/frameCount`` and
    /// ``BLIPMessage/wirePayloadBytes`` are those of the frames sent.
    public var message: BLIPMessage
}

/// A message in progress, as its decoder knows it (``MediatorOutput/unreadBody``).
public struct UnreadBody: Sendable, Equatable {
    /// The way it travels.
    public var direction: BLIPDirection
    public var type: MessageType
    /// Its number as its sender gave it (a reply's is not mapped back here).
    public var number: MessageNumber

    public init(direction: BLIPDirection, type: MessageType, number: MessageNumber) {
        self.direction = direction
        self.type = type
        self.number = number
    }
}

/// What the session must do after one received frame or one timer.
///
/// The first send is stored inline, so the common output (forward the received frame, nothing
/// else) allocates nothing; read the sends with ``forEachSend(_:)`` on a hot path.
public struct MediatorOutput: Sendable {
    private var firstSend: MediatedSend?
    private var laterSends: [MediatedSend] = []
    public var timers: [MediationTimer] = []
    /// The frame as decoded (for the inspector and observers); nil for a timer. Reply numbers are
    /// in the requester's own numbering, so replies pair with their requests; a reply the relay
    /// replaced (a filtered `changes`' reply mapped back to the full list) is the one the
    /// requester got, so it pairs with the request as the requester sent it.
    public var decoded: DecodedFrame?
    public var reports: [MediationReport] = []
    /// The replies the relay sent on its own in this output, in order.
    public var answers: [RelayAnswer] = []
    /// A policy asked to end the session once this output is written (the first such request).
    public var closeRequest: SessionCloseRequest?
    /// Set on the frame that completed a request the relay kept from its receiver (denied or
    /// dropped, NoReply or not): observers read that request as withheld, not delivered.
    public var completedWithheld = false
    /// Set on the frame that completed the properties of a message still in progress whose body
    /// the mediator will not read whole: its frames are forwarded, held or swallowed one by one,
    /// not decided on (``HeadDecision/Action/awaitBody``) or rewritten (a filtered `changes`
    /// reply). If nothing else reads it either, the shell may say so with
    /// ``SessionMediator/stopKeepingBody(_:keepingFirst:)``.
    public var unreadBody: UnreadBody?

    public init() {}

    /// In order: WebSocket binary messages to send.
    public var sends: [MediatedSend] {
        guard let firstSend else { return [] }
        return [firstSend] + laterSends
    }

    /// How many WebSocket binary messages to send.
    public var sendCount: Int { firstSend == nil ? 0 : 1 + laterSends.count }

    /// Adds one send after those already in the output.
    public mutating func append(_ send: MediatedSend) {
        if firstSend == nil { firstSend = send } else { laterSends.append(send) }
    }

    /// Takes what a policy decided beside a message: its reports after those already here, its
    /// close unless one is asked for already.
    public mutating func take(_ asides: VerdictAsides) {
        guard !asides.isEmpty else { return }
        reports += asides.reports
        if closeRequest == nil { closeRequest = asides.close }
    }

    /// Visits the sends in order without building an array.
    public func forEachSend(_ body: (MediatedSend) throws -> Void) rethrows {
        guard let firstSend else { return }
        try body(firstSend)
        for send in laterSends { try body(send) }
    }

    /// True when the only thing to do is forward the received frame unchanged.
    public var isPassThrough: Bool {
        guard let firstSend, laterSends.isEmpty, timers.isEmpty, reports.isEmpty, closeRequest == nil else { return false }
        if case .original = firstSend.payload { return true } else { return false }
    }
}
