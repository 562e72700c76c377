import BLIPCore
import BLIPNIO
import Mediation
import Policy
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Replication

/// One client's session: the client hop, the upstream hop, a ``DirectionPump`` per direction,
/// the decoding ``SessionInspector``, the observers, and, when the configuration gives the session
/// a mediation policy, its ``SessionMediator`` (see `RelaySession+Mediation.swift`).
///
/// Closing (wire-format reference §7): a CLOSE from either side is passed on unchanged; once both
/// sides have sent one, both connections are closed. A TCP drop without CLOSE on one side drops
/// the other side's TCP too, so each peer sees what a direct peer would have (1006). The relay's
/// own errors (strict decoding, oversized frames, idle) send a CLOSE with the code from
/// ``RelayError/closeCode`` to both sides.
///
/// `@unchecked Sendable`: every method runs on the one event loop both channels share; the
/// server only hands the reference across threads to hop back onto that loop.
final class RelaySession: @unchecked Sendable {
    private(set) var info: SessionInfo
    let eventLoop: EventLoop
    let configuration: RelayConfiguration
    let observers: ObserverSet
    let pumps: [DirectionPump]
    let inspector: SessionInspector
    /// Set when the configuration gave this session a policy: frames are then decoded before they
    /// are forwarded, and the mediator decides what leaves.
    let mediator: SessionMediator?
    /// The policy file's message rules for this session (``RelayConfiguration/policy``).
    let policyMediation: PolicyMediation?
    var mediationTimers: [UInt64: Scheduled<Void>] = [:]
    private(set) var hops: [HopHandler?] = [nil, nil]
    private var channels: [Channel?] = [nil, nil]
    private var closes: [WebSocketClose?] = [nil, nil]
    private var closeSent = [false, false]
    private var opened = false
    private var inactive = [false, false]
    private var relayError: RelayError?
    private var closeTimer: Scheduled<Void>?
    /// Idle detection while the session is open; nil without ``RelayConfiguration/idleTimeout``.
    /// The hops mark traffic on it.
    var idleWatch: IdleWatch?
    private var idleTimer: RepeatedTask?
    private var finished = false
    var statistics = SessionStatistics()
    /// ``statistics`` with what the mediator counts itself filled in.
    var currentStatistics: SessionStatistics {
        var current = statistics
        if let mediator {
            current.maxDelayedBytes = BLIPDirection.allCases.map { mediator.peakDelayedBytes($0) }
        }
        return current
    }
    private var finishedCallbacks: [() -> Void] = []
    /// Held ``SessionReadGate``s: while above zero neither hop reads (capture back-pressure).
    private var readHolds = 0
    /// Per direction, data frames forwarded in the current read batch and not yet decoded
    /// (``inspectForwarded(_:)``), as header and payload slice: at most one read batch's worth.
    private var forwardedUninspected: [[(header: WebSocketFrameHeader, payload: ByteBuffer)]] = [[], []]
    /// A policy `close` asked for while a message was being mediated: carried out right after
    /// that message is written, before any later frame of the same read is forwarded.
    private var requestedClose: RelayError?
    /// Shared by every session of the relay, for the analyzers' shared-client findings.
    private let checkpoints: CheckpointRegistry?

    init(info: SessionInfo, clientChannel: Channel, configuration: RelayConfiguration, observers: ObserverSet,
         checkpoints: CheckpointRegistry? = nil) {
        self.checkpoints = checkpoints
        self.info = info
        self.eventLoop = clientChannel.eventLoop
        self.configuration = configuration
        self.observers = observers
        let allocator = clientChannel.allocator
        let size = configuration.limits.maxWebSocketMessageSize
        pumps = [DirectionPump(direction: .clientToServer, maxMessageSize: size, allocator: allocator),
                 DirectionPump(direction: .serverToClient, maxMessageSize: size, allocator: allocator)]
        var policyMediation: PolicyMediation?
        if configuration.mediationPolicy == nil, let store = configuration.policy {
            policyMediation = PolicyMediation(store: store, session: SessionFacts(
                id: info.id, user: info.user, clientIP: info.clientAddress, database: info.database,
                tls: configuration.serverTLS != nil))
        }
        self.policyMediation = policyMediation
        if let policy = policyMediation ?? configuration.mediationPolicy?(info) {
            var limits = configuration.mediationLimits
            limits.decoder = configuration.limits.decoder
            mediator = SessionMediator(policy: policy, limits: limits)
        } else {
            mediator = nil
        }
        inspector = SessionInspector(sessionID: info.id, limits: configuration.limits, observers: observers,
                                     decodes: mediator == nil)
        statistics.sessionID = info.id
        channels[HopHandler.Side.client.rawValue] = clientChannel
        if let policyMediation {
            policyMediation.report = { verdict in
                guard observers.wants(.messages) else { return }
                observers.emit(.verdict(verdict), kind: .messages)
            }
            policyMediation.closeSession = { [unowned self] code, reason in
                // After the matched message is written (a counted close lets it go first); the
                // fallback covers a decision taken outside a read (a timer).
                requestedClose = RelayError(.policyClose(code: code, reason: reason))
                eventLoop.execute { self.carryOutRequestedClose() }
            }
        }
    }

    // MARK: setup

    func setSubprotocol(_ subprotocol: String?) {
        info.subprotocol = subprotocol
        policyMediation?.session.subprotocol = subprotocol
    }

    func setUpstreamResponse(_ response: HTTPResponseHead) { info.upstreamResponse = response }

    func setUpstreamConnectTime(_ time: TimeAmount) { info.upstreamConnectTime = time }

    /// Puts `hop` (already in its channel's pipeline) into the session.
    func attach(_ hop: HopHandler, channel: Channel) {
        hop.session = self
        hops[hop.side.rawValue] = hop
        channels[hop.side.rawValue] = channel
        guard let client = hops[0], let upstream = hops[1] else { return }
        pumps[BLIPDirection.clientToServer.rawValue].releaseHeld(to: upstream)
        pumps[BLIPDirection.serverToClient.rawValue].releaseHeld(to: client)
        opened = true
        if let timeout = configuration.idleTimeout { watchIdleness(timeout) }
        if observers.wants(.analysis) {
            let analyzer = SessionAnalyzer(connection: Int(truncatingIfNeeded: info.id), registry: checkpoints)
            analyzer.observeHandshake(subprotocol: info.subprotocol, user: info.user, at: SessionInspector.analyzerNow())
            info.analyzer = analyzer
            inspector.analyzer = analyzer
        }
        for recorder in observers.recorders {
            recorder.sessionWillOpen(info, readGate: SessionReadGate(session: self))
        }
        if observers.wants(.sessions) { observers.emit(.sessionOpened(info), kind: .sessions) }
        client.resumeReading()
        upstream.resumeReading()
    }

    /// The client went away before the session was complete: drop whatever exists.
    func abandon() {
        for channel in channels { channel?.close(promise: nil) }
    }

    func partner(of hop: HopHandler) -> HopHandler? { hops[1 - hop.side.rawValue] }

    // MARK: flow control

    /// Whether `hop` may read: no ``SessionReadGate`` holds the session, its partner takes writes,
    /// and the mediator (if any) holds no more than ``MediationLimits/maxDelayedBytes`` for timers
    /// in the hop's inbound direction.
    func mayRead(_ hop: HopHandler) -> Bool {
        readHolds == 0 && (partner(of: hop)?.isWritable ?? false)
            && !(mediator?.isOverDelayBudget(hop.inboundDirection) ?? false)
    }

    func partnerWritable(_ hop: HopHandler) {
        guard let partner = partner(of: hop), mayRead(partner) else { return }
        partner.resumeReading()
    }

    /// Stops reading from both peers (from their next read on) until as many ``releaseReading()``.
    func holdReading() { readHolds += 1 }

    func releaseReading() {
        readHolds = max(0, readHolds - 1)
        guard readHolds == 0 else { return }
        for hop in hops.compactMap({ $0 }) where mayRead(hop) { hop.resumeReading() }
    }

    func flowChanged(_ hop: HopHandler, paused: Bool) {
        let direction = hop.inboundDirection
        if paused { statistics.flowPauses[direction.rawValue] += 1 }
        if observers.wants(.sessions) {
            observers.emit(.flowControl(sessionID: info.id, direction: direction, paused: paused), kind: .sessions)
        }
    }

    // MARK: traffic

    /// Takes the complete frames of one read from `scanner`, in order. Pass-through: each run of
    /// consecutive data frames is written to the partner hop as one slice of the received bytes
    /// (counted per frame, and kept for inspection after the flush); a control frame ends the run,
    /// which is written before the control frame is handled. A mediating session gets every frame
    /// as a `WebSocketFrame`. Throws for bytes that are not acceptable framing, after writing the
    /// frames before them.
    func received(_ scanner: inout WebSocketFrameScanner, on hop: HopHandler) throws(WebSocketFrameError) {
        let direction = hop.inboundDirection.rawValue
        let pump = pumps[direction]
        /// Consecutive data frames found and not yet written: received bytes `start..<end`.
        var run: (start: Int, end: Int)?
        func forwardRun() {
            guard let bytes = run else { return }
            run = nil
            pump.forward(raw: scanner.bytes(from: bytes.start, to: bytes.end), to: partner(of: hop))
        }
        defer { forwardRun() }
        while let frame = try scanner.next() {
            let header = frame.header
            guard header.isData, mediator == nil else {
                forwardRun()
                received(scanner.webSocketFrame(frame), on: hop, raw: scanner.bytes(from: frame.start, to: frame.end))
                continue
            }
            // Closing for the relay's own reason: nothing more is forwarded either way.
            guard relayError == nil else { continue }
            if let bytes = run, bytes.end == frame.start {
                run = (bytes.start, frame.end)
            } else {
                forwardRun()
                run = (frame.start, frame.end)
            }
            statistics.framesForwarded[direction] += 1
            statistics.bytesForwarded[direction] += header.frameLength
            if inspector.isDecoding || observers.wants(.frameBytes) {
                forwardedUninspected[direction].append((header, scanner.payload(of: frame)))
            }
        }
    }

    /// One frame the pass-through path does not forward as raw bytes: a control frame, or any
    /// frame of a mediating session. `raw` is the frame as received: a CLOSE passed on, and a
    /// mediated frame left unchanged, are written as those bytes.
    func received(_ frame: WebSocketFrame, on hop: HopHandler, raw: ByteBuffer) {
        let direction = hop.inboundDirection
        let pump = pumps[direction.rawValue]
        switch frame.opcode {
        case .ping:
            hop.write(RawFrame.make(opcode: .pong, payload: pump.unmasked(frame), masked: hop.side == .upstream,
                                    allocator: hop.context?.channel.allocator ?? ByteBufferAllocator()))
            hop.flush()
        case .pong:
            break
        case .connectionClose:
            inspectForwarded(direction)  // what came before the CLOSE is reported before it
            closeReceived(frame, on: hop, raw: raw)
        default:
            // Closing for the relay's own reason: nothing more is forwarded either way.
            guard relayError == nil else { return }
            if mediator != nil {
                mediate(frame, on: hop, raw: raw)
                carryOutRequestedClose()
                return
            }
            // Pass-through data frames are forwarded by ``received(_:on:)`` with the scanner.
            assertionFailure("pass-through data frame \(frame.opcode) handed over as a WebSocketFrame")
        }
    }

    /// Decodes (and reports) the frames forwarded in `direction` since the last call, in order.
    /// Called once the read batch's bytes are flushed, so decoding, analysis and logging never
    /// hold forwarded bytes back.
    private func inspectForwarded(_ direction: BLIPDirection) {
        guard !forwardedUninspected[direction.rawValue].isEmpty else { return }
        // Taken out and put back emptied, so the array's storage is reused rather than copied.
        var frames: [(header: WebSocketFrameHeader, payload: ByteBuffer)] = []
        swap(&frames, &forwardedUninspected[direction.rawValue])
        let pump = pumps[direction.rawValue]
        for frame in frames { inspect(frame.header, payload: frame.payload, pump: pump) }
        frames.removeAll(keepingCapacity: true)
        if forwardedUninspected[direction.rawValue].isEmpty { swap(&frames, &forwardedUninspected[direction.rawValue]) }
    }

    private func inspect(_ header: WebSocketFrameHeader, payload: ByteBuffer, pump: DirectionPump) {
        guard inspector.isDecoding || observers.wants(.frameBytes) else { return }
        let (bytes, tooLarge) = pump.message(fin: header.fin, opcode: header.opcode, mask: header.mask,
                                             payload: payload)
        guard inspector.isDecoding else {
            if let bytes { inspector.emitUndecoded(bytes, direction: pump.direction) }
            return
        }
        var failure: RelayError?
        if tooLarge {
            failure = RelayError(.decodeFailed(BLIPError(.frameTooLarge, "WebSocket message over the reassembly limit"),
                                               pump.direction))
            statistics.decodeErrors[pump.direction.rawValue] += 1
        } else if let bytes {
            failure = inspector.inspect(bytes, direction: pump.direction, statistics: &statistics)
        }
        if let failure, configuration.strict { fail(failure) }
    }

    func readBatchComplete(on hop: HopHandler) {
        if let destination = partner(of: hop) {
            destination.flush()
            // Asked only above the high-water mark: below it the buffer is small by definition,
            // and the question costs a dynamic cast per read batch.
            if !destination.isWritable {
                let direction = hop.inboundDirection.rawValue
                let buffered = destination.bufferedBytes
                if buffered > statistics.maxBufferedBytes[direction] { statistics.maxBufferedBytes[direction] = buffered }
            }
        }
        inspectForwarded(hop.inboundDirection)
    }

    // MARK: closing

    private func closeReceived(_ frame: WebSocketFrame, on hop: HopHandler, raw: ByteBuffer) {
        let side = hop.side.rawValue
        if closes[side] == nil { closes[side] = WebSocketClose(payload: pumps[hop.inboundDirection.rawValue].unmasked(frame)) }
        if let destination = partner(of: hop), !closeSent[destination.side.rawValue] {
            closeSent[destination.side.rawValue] = true
            pumps[hop.inboundDirection.rawValue].forward(raw: raw, to: destination)
            destination.flush()
        }
        if closes[1 - side] != nil {
            closeAll()
        } else if closeTimer == nil {
            closeTimer = eventLoop.scheduleTask(in: configuration.closeTimeout) { [self] in
                closeTimer = nil
                relayError = relayError ?? RelayError(.closeTimeout)
                closeAll()
            }
        }
    }

    private func carryOutRequestedClose() {
        guard let close = requestedClose else { return }
        requestedClose = nil
        fail(close, awaitingCloseReplies: true)
    }

    /// Ends the session for the relay's own reason: CLOSE with its code to both sides, then drop.
    /// With `awaitingCloseReplies` (the default) the TCP connections are closed once both sides
    /// answered the CLOSE (or after the close timeout): closing at once can reset a connection
    /// whose peer is still sending, and the peer's stack then drops the unread CLOSE and reports
    /// 1006 instead of the relay's code (RFC 6455 §7.1.1).
    func fail(_ error: RelayError, awaitingCloseReplies: Bool = true) {
        guard relayError == nil, !finished else { return }
        relayError = error
        let reason = "blipscope: " + error.description
        if error.closeCode == 1006 {
            // An abrupt drop, as a gateway that went away looks to its client: no CLOSE frame.
            // What was forwarded before it (the counted message) still goes out first.
            closeAll()
            return
        }
        for hop in hops.compactMap({ $0 }) where !closeSent[hop.side.rawValue] {
            closeSent[hop.side.rawValue] = true
            let payload = WebSocketClose(code: error.closeCode, reason: reason).payload()
            hop.write(RawFrame.make(opcode: .connectionClose, payload: payload, masked: hop.side == .upstream,
                                    allocator: ByteBufferAllocator()))
            // Flushed now: closing one channel may close the other before ``closeAll()`` reaches it.
            hop.flush()
        }
        guard awaitingCloseReplies else {
            closeAll()
            return
        }
        if closes[0] != nil && closes[1] != nil {
            closeAll()
        } else if closeTimer == nil {
            closeTimer = eventLoop.scheduleTask(in: configuration.closeTimeout) { [self] in
                closeTimer = nil
                closeAll()
            }
        }
    }

    private func watchIdleness(_ timeout: TimeAmount) {
        let watch = IdleWatch(timeout: timeout)
        idleWatch = watch
        idleTimer = eventLoop.scheduleRepeatedTask(initialDelay: watch.checkInterval,
                                                   delay: watch.checkInterval) { [weak self] task in
            guard let self, !self.finished else { return task.cancel() }
            if self.idleWatch?.check() == true {
                task.cancel()
                self.fail(RelayError(.idleTimeout))
            }
        }
    }

    func hopFailed(_ hop: HopHandler, error: any Error) {
        switch error {
        case let error as WebSocketFrameError:
            fail(error.relayError)
        default:
            channels[hop.side.rawValue]?.close(promise: nil)
        }
    }

    func hopClosed(_ hop: HopHandler) {
        for direction in BLIPDirection.allCases { inspectForwarded(direction) }
        let side = hop.side.rawValue
        inactive[side] = true
        if closes[side] == nil && relayError == nil {
            closes[side] = .abnormal
        }
        if !inactive[1 - side] && relayError == nil {
            // A drop without CLOSE is passed on as a drop. When the relay itself is closing,
            // ``closeAll()`` closes the other side once its CLOSE is written.
            channels[1 - side]?.close(promise: nil)
        }
        if inactive[1 - side] || channels[1 - side] == nil { finish() }
    }

    /// The client's channel closed; before its hop exists the session learns it only this way.
    func clientChannelClosed() {
        guard hops[0] == nil else { return }
        inactive[0] = true
        if let upstream = channels[1], !inactive[1] { upstream.close(promise: nil) } else { finish() }
    }

    var isFinished: Bool { finished }

    /// Runs `callback` once both connections are closed (at once if they are).
    func whenFinished(_ callback: @escaping () -> Void) {
        if finished { callback() } else { finishedCallbacks.append(callback) }
    }

    /// Flushes what is queued on each hop, then closes its channel once written.
    private func closeAll() {
        for index in 0..<2 {
            guard let channel = channels[index] else { continue }
            channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        policyMediation?.engine.sessionEnded(info.id)
        closeTimer?.cancel()
        closeTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        for timer in mediationTimers.values { timer.cancel() }
        mediationTimers.removeAll()
        for hop in hops { hop?.session = nil }
        if opened, observers.wants(.sessions) {
            var summary = SessionSummary(info: info, clientClose: closes[0], upstreamClose: closes[1],
                                         relayError: relayError, statistics: currentStatistics)
            if let analyzer = info.analyzer {
                let now = SessionInspector.analyzerNow()
                for (side, close) in [(BLIPDirection.clientToServer, closes[0]), (.serverToClient, closes[1])] {
                    if let close { analyzer.observeClose(from: side, code: Int(close.code), reason: close.reason, at: now) }
                }
                summary.replication = analyzer.summary()
            }
            observers.emit(.sessionClosed(summary), kind: .sessions)
        }
        let callbacks = finishedCallbacks
        finishedCallbacks.removeAll()
        for callback in callbacks { callback() }
    }

    /// Closes the session for a relay shutdown: 1001 "going away" to both sides.
    func shutDown() {
        guard !finished else { return }
        if hops[0] == nil || hops[1] == nil { abandon(); return }
        fail(RelayError(.shuttingDown))
    }
}
