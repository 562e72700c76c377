import BLIPCore

/// What kinds of events an observer wants; the relay builds only those.
public struct RelayEventInterests: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Open, close, refused handshakes, flow control.
    public static let sessions = RelayEventInterests(rawValue: 1)
    /// Message heads, complete messages, decode errors.
    public static let messages = RelayEventInterests(rawValue: 2)
    /// Every frame and ACK.
    public static let frames = RelayEventInterests(rawValue: 4)
    /// Every WebSocket data message as a ``RelayEvent/frame(_:)`` with ``FrameEvent/bytes`` set:
    /// ACKs and frames the decoder could not read included (capture). An observer with both this
    /// and ``frames`` still gets ACKs as ``RelayEvent/ack(sessionID:direction:ack:time:)`` too.
    public static let frameBytes = RelayEventInterests(rawValue: 8)
    /// Complete messages read by the session's one replication ``SessionAnalyzer``: the session
    /// creates it at open (``SessionInfo/analyzer``), feeds it every message and ACK, sets
    /// ``MessageEvent/analysis`` and ends with ``SessionSummary/replication``. Every observer that
    /// asks shares that one analyzer, so a message is analyzed once however many observers read it.
    public static let analysis = RelayEventInterests(rawValue: 16)
    /// With ``frameBytes``: each frame the session's decoder read while forwarding (pass-through,
    /// both legs the same) comes with that reading (``FrameEvent/decoded``), so a capture's
    /// redactor need not inflate and checksum the stream a second time.
    public static let frameReadings = RelayEventInterests(rawValue: 32)
    /// With ``messages``: every complete message comes with its body. Without any observer asking,
    /// a session keeps only the bodies its analyzer reads (``SessionAnalyzer`` types changes,
    /// revisions, checkpoints… from their bodies, an attachment or a message of an unknown profile
    /// from its size), and of the others the first ``RelayObserver/messageBodyPrefix`` bytes its
    /// observers ask for (a preview): the rest is inflated and checksummed as it passes, counted,
    /// and not held (``BLIPMessage/unkeptBodyBytes``), so a relay that logs at `info` does not
    /// assemble a 10 MB attachment nobody reads. Only a message of more than one frame can go
    /// unkept: its properties must be in before its body is.
    public static let messageBodies = RelayEventInterests(rawValue: 64)
    public static let all: RelayEventInterests = [.sessions, .messages, .frames, .analysis, .messageBodies]
}

/// Watches sessions (logging, metrics, capture, tests). Called synchronously on the session's
/// event loop *after* the traffic it describes was forwarded: it must return quickly and never
/// block. An observer that needs to do slow work hands the event to its own queue.
public protocol RelayObserver: Sendable {
    var interests: RelayEventInterests { get }
    func observe(_ event: RelayEvent)
    /// A complete message (``RelayEventInterests/messages``), lent for the call. The relay reports
    /// every message this way; the default wraps a copy in ``RelayEvent/message(_:)`` for
    /// ``observe(_:)``. An observer that reads messages on the hot path (the log) implements it
    /// to borrow the event instead: wrapping it in the enum and matching it out again copied
    /// the event twice and retained what it holds.
    func observe(message event: borrowing MessageEvent)
    /// Without ``RelayEventInterests/messageBodies``: how many bytes at the start of each message's
    /// body this observer reads (a preview; by default none). The session keeps that much of every
    /// body it does not keep whole.
    var messageBodyPrefix: Int { get }
    /// This session's handler, asked once on the session's event loop as it opens; the handler
    /// then gets the session's every event, ``RelayEvent/sessionOpened(_:)`` first. `readGate`
    /// pauses the session's reads (for a recorder whose storage falls behind). Nil (the default,
    /// for an observer that keeps nothing per session): the session's events go to ``observe(_:)``.
    func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)?
}

extension RelayObserver {
    public func observe(message event: borrowing MessageEvent) { observe(.message(copy event)) }
    public var messageBodyPrefix: Int { 0 }
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? { nil }
}

/// The observers of a relay, with their interests folded together once, and where events go:
/// each observer itself until ``opened(_:readGate:)`` makes a session's own set, in which an
/// observer that made a handler for that session is replaced by it.
///
/// `@unchecked Sendable`: the relay-wide set holds no handler; a session's own set is kept by
/// that session, on its event loop.
struct ObserverSet: @unchecked Sendable {
    struct Handler {
        let interests: RelayEventInterests
        let observer: any RelayObserver
        /// The observer's handler for this session, when it made one.
        let session: (any SessionObserver)?

        @inline(__always) func observe(_ event: RelayEvent) {
            if let session { session.observe(event) } else { observer.observe(event) }
        }

        @inline(__always) func observe(message event: borrowing MessageEvent) {
            if let session { session.observe(message: event) } else { observer.observe(message: event) }
        }
    }

    let observers: [any RelayObserver]
    private(set) var handlers: [Handler]
    let interests: RelayEventInterests
    /// The observers that hold per-session resources (capture, pcap).
    let recorders: [any RelayRecorder]

    /// The longest ``RelayObserver/messageBodyPrefix`` of the observers that read messages: what a
    /// session keeps of a body it does not keep whole.
    let bodyPrefix: Int

    init(_ observers: [any RelayObserver]) {
        self.observers = observers
        self.handlers = observers.map { Handler(interests: $0.interests, observer: $0, session: nil) }
        self.recorders = observers.compactMap { $0 as? any RelayRecorder }
        self.interests = observers.reduce(into: []) { $0.formUnion($1.interests) }
        self.bodyPrefix = observers.filter { $0.interests.contains(.messages) }.map(\.messageBodyPrefix).max() ?? 0
    }

    @inline(__always) func wants(_ kind: RelayEventInterests) -> Bool { interests.contains(kind) }

    /// The set of a session that is opening: each observer's handler for it, asked once.
    func opened(_ info: SessionInfo, readGate: SessionReadGate?) -> ObserverSet {
        var set = self
        set.handlers = observers.map { Handler(interests: $0.interests, observer: $0, session: $0.open(info, readGate: readGate)) }
        return set
    }

    func emit(_ event: RelayEvent, kind: RelayEventInterests) {
        // By index: each handler is called in place, not copied out of the array.
        for index in handlers.indices where handlers[index].interests.contains(kind) { handlers[index].observe(event) }
    }

    /// A complete message, lent to each handler whose observer wants ``RelayEventInterests/messages``.
    func emit(message event: borrowing MessageEvent) {
        for index in handlers.indices where handlers[index].interests.contains(.messages) {
            handlers[index].observe(message: event)
        }
    }

    /// One frame: with its bytes to ``RelayEventInterests/frameBytes`` observers, without to the
    /// other ``RelayEventInterests/frames`` observers (as `.ack` for an ACK; nothing when it was not
    /// decoded).
    func emitFrame(_ frame: FrameEvent, ack: AckInfo?, decoded: Bool) {
        for handler in handlers {
            let interests = handler.interests
            if interests.contains(.frameBytes) {
                handler.observe(.frame(frame))
                if let ack, interests.contains(.frames) {
                    handler.observe(.ack(sessionID: frame.sessionID, direction: frame.direction, ack: ack, time: frame.time))
                }
            } else if interests.contains(.frames), decoded {
                if let ack {
                    handler.observe(.ack(sessionID: frame.sessionID, direction: frame.direction, ack: ack, time: frame.time))
                } else {
                    var plain = frame
                    plain.bytes = nil
                    handler.observe(.frame(plain))
                }
            }
        }
    }

    /// Tells each of the session's handlers that the input's events are all out.
    func batchEnded() {
        for index in handlers.indices { handlers[index].session?.batchEnded() }
    }
}
