import BLIPCore
import BLIPNIO
import NIOCore
import WebSocketWire

/// The frame path: from the bytes a side read to what is written to the other side, and, once
/// the read batch is flushed, to the inspector.
extension SessionCore {
    /// Takes one read's bytes. Pass-through: each run of consecutive data frames is written to
    /// the partner as one slice of the received bytes (counted per frame, and kept for inspection
    /// after the flush); a control frame ends the run, which is written before the control frame
    /// is handled. A mediating session hands every data frame to the mediator. Bytes that are not
    /// acceptable framing end the session (1009 or 1002), after the frames before them.
    func received(_ bytes: ByteBuffer, on side: SessionSide, into actions: inout [SessionAction]) {
        guard !framingFailed[side.rawValue] else {
            // As a decoder that failed would: more bytes from a peer that broke the framing close
            // its connection (its CLOSE is already on the way).
            actions.append(.drop(side))
            return
        }
        sawTraffic()
        scanners[side.rawValue].append(bytes)
        let direction = side.inbound.rawValue
        /// Consecutive data frames found and not yet written: received bytes `start..<end`.
        var run: (start: Int, end: Int)?
        /// Whether ``uninspectedBytes`` counts this read's buffer (again after an inspection).
        var bufferCounted = false
        do {
            while let frame = try scanners[side.rawValue].next() {
                let header = frame.header
                guard header.isData else {
                    forward(&run, from: side, into: &actions)
                    control(frame, on: side, into: &actions)
                    continue
                }
                // Closing for the relay's own reason: nothing more is forwarded either way.
                guard !closing.isClosingForRelay else { continue }
                if mediator != nil {
                    mediate(frame, on: side, into: &actions)
                    continue
                }
                if configuration.strict {
                    // Strict: decoded before it is forwarded, so a bad frame never reaches the peer.
                    forward(&run, from: side, into: &actions)
                    if let failure = inspect(header, payload: scanners[side.rawValue].payload(of: frame), direction: side.inbound,
                                             at: now) {
                        fail(failure, into: &actions)
                        continue
                    }
                    statistics.framesForwarded[direction] += 1
                    statistics.bytesForwarded[direction] += header.frameLength
                    write(scanners[side.rawValue].bytes(from: frame.start, to: frame.end), to: side.other, into: &actions)
                    continue
                }
                if let bytes = run, bytes.end == frame.start {
                    run = (bytes.start, frame.end)
                } else {
                    forward(&run, from: side, into: &actions)
                    run = (frame.start, frame.end)
                }
                statistics.framesForwarded[direction] += 1
                statistics.bytesForwarded[direction] += header.frameLength
                if !inspector.isDecoding {
                    undecoded[direction].frames += 1
                    undecoded[direction].bytes += Int(header.payloadLength)
                }
                if inspector.isDecoding || observers.wants(.frameBytes) {
                    if !bufferCounted {
                        // The waiting slices keep this read's buffer alive: it counts whole, once.
                        uninspectedBytes += bytes.capacity
                        bufferCounted = true
                    }
                    let payload = scanners[side.rawValue].payload(of: frame)
                    uninspectedBytes += payload.readableBytes
                    uninspected.append(UninspectedFrame(direction: side.inbound, header: header, payload: payload, time: now))
                    if batchIsFull {
                        // A read of many small frames: the full batch is forwarded and flushed
                        // first (inspection never holds bytes back), then inspected here, so the
                        // queue never holds more than one batch whatever a read carries.
                        forward(&run, from: side, into: &actions)
                        if attached[side.other.rawValue] { actions.append(.flush(side.other)) }
                        inspectPending(into: &actions)
                        bufferCounted = false
                    }
                }
            }
            forward(&run, from: side, into: &actions)
        } catch {
            forward(&run, from: side, into: &actions)
            framingFailed[side.rawValue] = true
            fail(error.relayError, into: &actions)
        }
    }

    /// Writes the run of received frames, if any, to the other side.
    private func forward(_ run: inout (start: Int, end: Int)?, from side: SessionSide, into actions: inout [SessionAction]) {
        guard let bytes = run else { return }
        run = nil
        write(scanners[side.rawValue].bytes(from: bytes.start, to: bytes.end), to: side.other, into: &actions)
    }

    /// PING is answered on its own hop (keep-alive is per hop, wire-format reference §1.1), PONG
    /// is dropped, CLOSE goes to the closing state machine and is passed on as it arrived.
    private func control(_ frame: WebSocketFrameScanner.Frame, on side: SessionSide, into actions: inout [SessionAction]) {
        let scanner = scanners[side.rawValue]
        let payload = WebSocketMessageAssembler.unmasked(scanner.payload(of: frame), frame.header.maskingKey, allocator)
        switch frame.header.opcode {
        case WebSocketFrameHeader.ping:
            let pong = WebSocketFrameWriter.frame(opcode: WebSocketFrameHeader.pong, payload: payload,
                                                  mask: side.masksWrites ? .random() : nil, allocator: allocator)
            write(pong, to: side, into: &actions)
            actions.append(.flush(side))
        case WebSocketFrameHeader.close:
            inspectPending(into: &actions)  // what came before the CLOSE is reported before it
            let raw = scanner.bytes(from: frame.start, to: frame.end)
            let steps = closing.closeReceived(from: side, WebSocketClose(payload: payload), otherAttached: attached[side.other.rawValue])
            for step in steps {
                if case .passOn(let destination) = step {
                    write(raw, to: destination, into: &actions)
                    actions.append(.flush(destination))
                }
            }
            apply(steps.filter { if case .passOn = $0 { false } else { true } }, into: &actions)
        default:
            break  // PONG
        }
    }

    /// The read batch on `side` is over: flush what it forwarded, then inspect what waits if it
    /// is due (``RelayLimits/inspectionDelay``), or arm the timer that will.
    ///
    /// A batch that fills is inspected at once and leaves an armed timer armed: it fires within
    /// the delay of the frames that came after the batch, so each of them still waits less than
    /// the delay, and under a steady stream the timer is armed once per delay rather than once
    /// per batch. Each armed timer is a `timerfd_settime` and, when it fires, a wake-up of the
    /// event loop: cancelling it does not disarm the loop's timer file descriptor.
    ///
    /// A batch that ended inside a frame asks for an immediate TCP acknowledgement of what it
    /// read (``RelayLimits/acknowledgeMidFrame``): the rest of that frame is often all its
    /// sender has left to send, and the relay, which forwards whole frames only, sends nothing
    /// back that could carry the acknowledgement, so without it the sender waited for the kernel's
    /// delayed acknowledgement (40 ms on Linux) once per such read: a large pull from Sync Gateway
    /// took 1.41× as long through the relay as direct (1.09× with it).
    func readComplete(on side: SessionSide, into actions: inout [SessionAction]) {
        if attached[side.other.rawValue] { actions.append(.flush(side.other)) }
        if configuration.limits.acknowledgeMidFrame, scanners[side.rawValue].pendingBytes > 0 {
            statistics.immediateAcks[side.inbound.rawValue] += 1
            actions.append(.acknowledge(side))
        }
        reportUndecoded(side.inbound)
        guard !uninspected.isEmpty else { return }
        if configuration.limits.inspectionDelay <= .zero || batchIsFull {
            inspectPending(into: &actions)
        } else if !inspectionArmed {
            inspectionArmed = true
            actions.append(.schedule(.inspection, configuration.limits.inspectionDelay))
        }
    }

    /// Reports the frames `direction` forwarded undecoded since the last report, if any.
    private func reportUndecoded(_ direction: BLIPDirection) {
        let (frames, bytes) = undecoded[direction.rawValue]
        guard frames > 0 else { return }
        undecoded[direction.rawValue] = (0, 0)
        guard observers.wants(.frames) else { return }
        observers.emit(.forwarded(sessionID: info.id, direction: direction, frames: frames, bytes: bytes), kind: .frames)
    }

    /// The waiting frames fill a batch (``RelayLimits/inspectionBatchFrames`` or ``RelayLimits/inspectionBatchBytes``).
    private var batchIsFull: Bool {
        uninspected.count >= configuration.limits.inspectionBatchFrames
            || uninspectedBytes >= configuration.limits.inspectionBatchBytes
    }

    /// Decodes (and reports) the forwarded frames that wait, in the order they were read. Called
    /// once their bytes are flushed, so decoding, analysis and logging never hold forwarded
    /// bytes back.
    func inspectPending(into actions: inout [SessionAction]) {
        guard !uninspected.isEmpty else { return }
        // Taken out and put back emptied, so the array's storage is reused rather than copied.
        var frames: [UninspectedFrame] = []
        swap(&frames, &uninspected)
        uninspectedBytes = 0
        for frame in frames {
            if let failure = inspect(frame.header, payload: frame.payload, direction: frame.direction, at: frame.time),
               configuration.strict {
                fail(failure, into: &actions)
            }
        }
        frames.removeAll(keepingCapacity: true)
        if uninspected.isEmpty { swap(&frames, &uninspected) }
    }

    /// Decodes one forwarded (or, in strict mode, about to be forwarded) data frame; the error
    /// when it broke decoding.
    private func inspect(_ header: WebSocketFrameHeader, payload: ByteBuffer, direction: BLIPDirection,
                         at time: ReceiptTime) -> RelayError? {
        guard inspector.isDecoding || observers.wants(.frameBytes) else { return nil }
        let (bytes, tooLarge) = assemblers[direction.rawValue].add(header, payload: payload)
        guard inspector.isDecoding else {
            if let bytes { inspector.emitUndecoded(bytes, direction: direction, at: time) }
            return nil
        }
        if tooLarge {
            statistics.decodeErrors[direction.rawValue] += 1
            let error = RelayError(.decodeFailed(BLIPError(.frameTooLarge, "WebSocket message over the reassembly limit"), direction))
            // Reported like every other decoding error (logged, seen by observers), not only counted.
            if observers.wants(.messages) {
                observers.emit(.decodeError(sessionID: info.id, direction: direction, error: error), kind: .messages)
            }
            return error
        }
        guard let bytes else { return nil }
        return inspector.inspect(bytes, direction: direction, statistics: &statistics, at: time)
    }
}

/// A forwarded data frame waiting for inspection, with the time it was read.
struct UninspectedFrame {
    var direction: BLIPDirection
    var header: WebSocketFrameHeader
    var payload: ByteBuffer
    var time: ReceiptTime
}
