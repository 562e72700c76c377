import BLIPCore
import Capture
import NIOCore
import Replication

/// The decoding side of a session: a copy of each forwarded WebSocket message goes through the
/// ``ConnectionDecoder`` of its direction, and what it yields becomes events. Forwarding never
/// waits on it (the session forwards and flushes a read batch first, then inspects it).
///
/// Memory: the decoders hold partly received messages, capped together by
/// ``RelayLimits/maxDecoderBytesInProgress``. Past the cap, or after a fatal error in pass-through,
/// the decoder is dropped and the session only forwards. A message body that no observer and not
/// the analyzer reads is not held (``RelayEventInterests/messageBodies``): the decoder keeps the
/// preview observers ask for (``RelayObserver/messageBodyPrefix``) and counts the rest.
final class SessionInspector {
    private var decoder: ConnectionDecoder?
    private let limits: RelayLimits
    /// The session's observers (their handlers for it once it opens).
    var observers: ObserverSet
    private let sessionID: UInt64
    /// Requests awaiting a reply, by the direction the request went: profile and start time.
    private var pending = [MessageNumberTable<PendingRequest>(), MessageNumberTable<PendingRequest>()]
    /// The session's replication analyzer (``RelayEventInterests/analysis``): reads each complete
    /// message and ACK once, for every observer.
    var analyzer: SessionAnalyzer?
    /// Whether this input holds ``analyzer`` (``heldAnalyzer``).
    private var holdsAnalyzer = false

    struct PendingRequest {
        var profile: String?
        var started: NIODeadline
    }

    /// What the pending table needs of a decoded data frame (``track(_:direction:at:)``):
    /// its fields, not the decoded frame itself (about 300 bytes, which passing would copy). Plain
    /// values only, so that passing it costs no reference counting.
    struct FrameProgress {
        var number: MessageNumber
        var flags: FrameFlags
        var type: MessageType
        /// The frame is its message's first.
        var startsMessage: Bool
        /// The frame completed its message (with ``startsMessage``: the message is whole in it).
        var completesMessage: Bool

        init(_ decoded: borrowing DecodedFrame, type: MessageType) {
            number = decoded.number
            flags = decoded.flags
            self.type = type
            startsMessage = decoded.startsMessage
            completesMessage = decoded.message != nil
        }
    }

    init(sessionID: UInt64, limits: RelayLimits, observers: ObserverSet, decodes: Bool = true) {
        self.sessionID = sessionID
        self.limits = limits
        self.observers = observers
        self.decoder = decodes ? ConnectionDecoder(limits: limits.decoder) : nil
        if observers.wants(.frameReadings) { decoder?.exposesPayloads = true }
    }

    var isDecoding: Bool { decoder != nil }

    /// Requests whose replies the decoder gave up waiting for (``BLIPLimits/maxAwaitedReplies``).
    var forgottenReplies: Int {
        guard let decoder else { return 0 }
        return BLIPDirection.allCases.reduce(0) { $0 + decoder.decoder(for: $1).forgottenReplies }
    }

    /// ``analyzer``, held from its first use in an input to the input's end (``releaseAnalyzer()``):
    /// one lock for all the messages of a read batch, none for an input that brings no message.
    private var heldAnalyzer: SessionAnalyzer? {
        guard let analyzer else { return nil }
        if !holdsAnalyzer {
            analyzer.hold()
            holdsAnalyzer = true
        }
        return analyzer
    }

    /// The session's input is done: lets go of the analyzer if it was held, for readers elsewhere.
    func releaseAnalyzer() {
        guard holdsAnalyzer else { return }
        holdsAnalyzer = false
        analyzer?.release()
    }

    /// True when a session analyzer reads the messages.
    var isAnalyzing: Bool { analyzer != nil }

    /// Decodes one WebSocket message (one BLIP frame) travelling in `direction`, read at `time`
    /// (its events carry that time, and round trips are measured between such times). Returns
    /// the error to close on when it is fatal (strict mode decides); non-fatal problems only
    /// become events.
    func inspect(_ bytes: ByteBuffer, direction: BLIPDirection, statistics: inout SessionStatistics,
                 at time: ReceiptTime) -> RelayError? {
        guard let decoder else { return nil }
        let decoded: DecodedFrame
        do {
            decoded = try decoder.receive(bytes, from: direction)
        } catch {
            emitUndecoded(bytes, direction: direction, at: time)
            return fail(RelayError(.decodeFailed(error, direction)), direction: direction, statistics: &statistics)
        }
        return record(decoded, bytes: bytes, direction: direction, statistics: &statistics, offersReading: true, time: time)
    }

    /// Takes a frame someone else already decoded (a mediating session's ``SessionMediator``
    /// decodes every frame once, before forwarding) and turns it into events, as ``inspect(_:direction:statistics:)``
    /// does. `bytes` is the BLIP frame as received. Never fails: the decoder's budget is the mediator's.
    ///
    /// `withheld`: the request this frame completed is one the relay kept from its receiver (the
    /// mediator says so, ``MediatorOutput/completedWithheld``): the analyzer reads it as such
    /// (``SessionAnalyzer/observe(withheld:from:at:)``). `relayAnswers`: the replies the relay
    /// itself sent back to this frame's sender (``MediatorOutput/answers``), read as replies from the other
    /// side, which is what the sender got.
    func inspect(decoded: DecodedFrame, bytes: ByteBuffer, direction: BLIPDirection,
                 statistics: inout SessionStatistics, leg: CaptureLeg = .both, withheld: Bool = false,
                 relayAnswers: [BLIPMessage] = [], at time: ReceiptTime) {
        _ = record(decoded, bytes: bytes, direction: direction, statistics: &statistics, enforcesBudget: false, leg: leg,
                   withheld: withheld, time: time)
        for answer in relayAnswers {
            complete(answer, direction: direction.reversed, pendingSince: nil, byRelay: true, time: time)
        }
    }

    /// Takes `decoded` (consuming): its message is moved on into the message event, not copied.
    private func record(_ decoded: consuming DecodedFrame, bytes: ByteBuffer, direction: BLIPDirection,
                        statistics: inout SessionStatistics, enforcesBudget: Bool = true,
                        leg: CaptureLeg = .both, withheld: Bool = false, offersReading: Bool = false,
                        time: ReceiptTime) -> RelayError? {
        if observers.wants(.frames) || observers.wants(.frameBytes) {
            var ack: AckInfo?
            if case .ack(let info) = decoded.outcome { ack = info }
            var event = FrameEvent(sessionID: sessionID, direction: direction, number: decoded.number,
                                   flags: decoded.flags, wireBytes: bytes.readableBytes,
                                   payloadBytes: decoded.payloadBytes)
            event.leg = leg
            event.time = time
            if observers.wants(.frameBytes) { event.bytes = bytes }
            // Only the pass-through decoder's readings: a mediated stream may later split in legs.
            if offersReading, let payload = decoded.payload {
                event.decoded = DecodedChunk(payload: payload, checksumBefore: decoded.checksumBefore)
            }
            observers.emitFrame(event, ack: ack, decoded: true)
        }
        if analyzer != nil, case .ack(let info) = decoded.outcome, let analyzer = heldAnalyzer {
            analyzer.observeAck(info, from: direction, at: time.analyzerSeconds)
        }
        if case .ignored(let error) = decoded.outcome {
            statistics.decodeErrors[direction.rawValue] += 1
            if observers.wants(.messages) {
                observers.emit(.decodeError(sessionID: sessionID, direction: direction,
                                            error: RelayError(.decodeFailed(error, direction))), kind: .messages)
            }
            return nil
        }
        guard let type = decoded.flags.type, !type.isAck else { return nil }
        let pendingSince = track(FrameProgress(decoded, type: type), direction: direction, at: time.uptime)
        if let head = decoded.head {
            // The properties of a message whose later frames are still to come.
            if type == .request, let profile = head.properties.profile {
                pending[direction.rawValue][decoded.number]?.profile = profile
            }
            if let decoder, !readsBody(of: head, direction: direction) {
                decoder.stopKeepingBody(of: type, number: head.number, from: direction, keepingFirst: bodyPrefix)
            }
            if observers.wants(.messages) {
                observers.emit(.messageHead(sessionID: sessionID, direction: direction, head: head, time: time), kind: .messages)
            }
        }
        if let message = decoded.message.take() {
            statistics.messagesDecoded[direction.rawValue] += 1
            complete(message, direction: direction, pendingSince: pendingSince,
                     withheld: withheld && message.type == .request, time: time)
        }
        if enforcesBudget, let decoder, decoder.bytesInProgress > limits.maxDecoderBytesInProgress {
            return fail(RelayError(.decoderBudgetExceeded(limits.maxDecoderBytesInProgress)),
                        direction: direction, statistics: &statistics)
        }
        return nil
    }

    /// A frame the decoder could not (or no longer does) read, for ``RelayEventInterests/frameBytes``
    /// observers only: number 0 and no flags.
    /// Also a frame the relay built itself (mediating mode), on the one `leg` it crossed.
    func emitUndecoded(_ bytes: ByteBuffer, direction: BLIPDirection, leg: CaptureLeg = .both, at time: ReceiptTime) {
        guard observers.wants(.frameBytes) else { return }
        var event = FrameEvent(sessionID: sessionID, direction: direction, number: 0, flags: FrameFlags(rawValue: 0),
                               wireBytes: bytes.readableBytes, payloadBytes: 0)
        event.bytes = bytes
        event.leg = leg
        event.time = time
        observers.emitFrame(event, ack: nil, decoded: false)
    }

    /// Whether anything this inspector feeds reads the whole body of the message `head` begins,
    /// travelling `direction`: an observer that reads bodies (``RelayEventInterests/messageBodies``)
    /// reads every one, the analyzer those of the profiles it reads. If not, only the first
    /// ``bodyPrefix`` bytes need keeping (a pass-through session's decoder is told so here; a
    /// mediating session's shell tells its mediator).
    func readsBody(of head: MessageHead, direction: BLIPDirection) -> Bool {
        observers.wants(.messageBodies) || analyzerReadsBody(of: head, direction: direction)
    }

    /// The longest body preview an observer asks for (``RelayObserver/messageBodyPrefix``).
    var bodyPrefix: Int { observers.bodyPrefix }

    /// Whether the session's analyzer will read the body of the message `head` begins: the
    /// replication reading of its profile, or of its request's for a reply
    /// (``ReplicationMessage/readsBody(of:profile:answering:)``). A reply to a request this
    /// session does not track (past ``RelayLimits/maxTrackedRequests``) keeps its body.
    private func analyzerReadsBody(of head: MessageHead, direction: BLIPDirection) -> Bool {
        guard analyzer != nil else { return false }
        if head.type == .request {
            return ReplicationMessage.readsBody(of: .request, profile: head.properties.profile.flatMap(ReplicationProfile.init(rawValue:)),
                                                answering: nil)
        }
        guard head.type == .response else { return true }
        guard let request = pending[direction.reversed.rawValue][head.number] else { return true }
        return ReplicationMessage.readsBody(of: head.type, profile: nil,
                                            answering: request.profile.flatMap(ReplicationProfile.init(rawValue:)))
    }

    /// Notes a frame's request in the pending table. Returns when a request whole in this frame
    /// started if it awaits a reply: ``complete(_:direction:pendingSince:withheld:byRelay:time:)``
    /// then records it, profile included, in one insertion.
    private func track(_ frame: FrameProgress, direction: BLIPDirection, at now: NIODeadline) -> NIODeadline? {
        var pendingSince: NIODeadline?
        if frame.startsMessage, frame.type == .request, !frame.flags.isNoReply,
           pending[direction.rawValue].count < limits.maxTrackedRequests {
            if frame.completesMessage {
                pendingSince = now
            } else {
                pending[direction.rawValue][frame.number] = PendingRequest(profile: nil, started: now)
            }
        }
        return pendingSince
    }

    /// `pendingSince`: set for a request whole in one frame that awaits a reply (``track(_:direction:at:)``).
    /// `withheld`: a request the relay kept from its receiver; `byRelay`: a reply the relay sent itself.
    private func complete(_ message: consuming BLIPMessage, direction: BLIPDirection, pendingSince: NIODeadline?,
                          withheld: Bool = false, byRelay: Bool = false, time: ReceiptTime) {
        var profile: String?
        var roundTrip: TimeAmount?
        if message.type.isReply, let request = pending[direction.reversed.rawValue].removeValue(forKey: message.number) {
            profile = request.profile
            roundTrip = time.uptime - request.started
        }
        let analysis = withheld ? heldAnalyzer?.observe(withheld: message, from: direction, at: time.analyzerSeconds)
            : heldAnalyzer?.observe(message: message, from: direction, at: time.analyzerSeconds)
        if message.type == .request {
            // A single-frame message carries no separate head: take the profile from the message,
            // as the analyzer read it when there is one (the same first `Profile`, read once).
            if let pendingSince {
                pending[direction.rawValue][message.number] = PendingRequest(
                    profile: analysis.map { $0.profile } ?? message.profile, started: pendingSince)
            } else {
                pending[direction.rawValue][message.number]?.profile = analysis.map { $0.profile } ?? message.profile
            }
        }
        guard observers.wants(.messages) else { return }
        let event = MessageEvent(sessionID: sessionID, direction: direction, message: message, requestProfile: profile,
                                 roundTrip: roundTrip, analysis: analysis, byRelay: byRelay, time: time)
        observers.emit(message: event)
    }

    private func fail(_ error: RelayError, direction: BLIPDirection, statistics: inout SessionStatistics) -> RelayError {
        statistics.decodeErrors[direction.rawValue] += 1
        statistics.decoding = false
        decoder = nil
        pending = [MessageNumberTable(), MessageNumberTable()]
        if observers.wants(.messages) {
            observers.emit(.decodeError(sessionID: sessionID, direction: direction, error: error), kind: .messages)
        }
        return error
    }
}
