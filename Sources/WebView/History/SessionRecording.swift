import BLIPCore
import BatchLock
import Replication
import SyncGatewayLog

/// One session's history: its description, counters each way and a bounded ring of
/// ``MessageRecord``s; requests and replies are linked both ways as replies arrive. Written by
/// the session (one message at a time), read by viewers; one lock, held only to append or to
/// copy records out: viewers format outside it.
public final class SessionRecording: Sendable {
    public let description: SessionDescription
    /// The session's analyzer (findings, summary, document timelines); nil when none read it.
    public let analyzer: SessionAnalyzer?
    /// The monotonic time the session opened (the zero of ``MessageRecord/time`` offsets).
    public let started: Double
    let limits: WebViewLimits
    /// Written by the session's event loop, which holds it for a whole input (``holdForBatch()``),
    /// read by viewers, who wait for that input to end.
    let state: BatchLocked<State>

    /// A message of one frame smaller than this is never ACKed: LiteCore ACKs once 50,000 bytes of
    /// a message are unacknowledged, go-blip at multiples of 50,000 bytes of its non-final frames
    /// (wire-format reference §5), far above it.
    static let ackableBytes = 4 * 1024

    struct PendingKey: Hashable {
        var direction: Int
        var number: MessageNumber
    }

    struct AckKey: Hashable {
        var direction: Int
        var isRequest: Bool
        var number: MessageNumber
    }

    struct State {
        var ring: [MessageRecord] = []
        /// Messages appended so far (the next record's seq).
        var total = 0
        var messages = [0, 0]
        var bytes = [0, 0]
        var errors = 0
        var previewBytes = 0
        var previewsSkipped = 0
        /// Estimated bytes of the analyzer's readings the ring keeps (``AnalyzedMessage/retainedBytes``).
        var analysisBytes = 0
        var analysesSkipped = 0
        /// Requests waiting for their reply: the request's seq. At most twice
        /// ``WebViewLimits/maxMessagesPerSession``: past it those no longer kept are dropped.
        var pending: [PendingKey: Int] = [:]
        /// Frames and ACKs of messages still arriving, attached when they complete; at most
        /// ``WebViewLimits/maxMessagesInProgress`` (beyond it the table is cleared).
        var inProgress: [AckKey: MessageCarriage] = [:]
        /// Records an ACK may still name after their last frame, by key: the record's seq. Only
        /// messages of more than one frame or at least ``SessionRecording/ackableBytes`` on the
        /// wire (a receiver ACKs after it took tens of KB of a message), so this costs nothing per
        /// small message, and an ACK for any other message is bogus and costs one lookup. At most
        /// twice ``WebViewLimits/maxMessagesInProgress``: past it, entries for records older than
        /// the newest that many are dropped.
        var ackable: [AckKey: Int] = [:]
        var closeReason: String?
        var endTime: Double?
        /// Sync Gateway's log of this replication, when the history joins it (``SessionHistory``
        /// made with `joinsSyncGatewayLog` and the session has a correlation ID).
        var syncGateway: SyncGatewayLogState?
    }

    /// Sync Gateway's lines of the session, each with the client request it is about; at most
    /// ``WebViewLimits/maxSyncGatewayLogBytesPerSession`` of them (later ones are counted).
    struct SyncGatewayLogState {
        var join: SessionLogJoin
        var entries: [SyncGatewayLogEntry] = []
        var bytes = 0
        var dropped = 0
    }

    /// A consistent copy of the counters.
    public struct Snapshot: Sendable {
        public var total: Int
        /// The oldest seq still kept.
        public var oldest: Int
        public var messages: [Int]
        public var bytes: [Int]
        public var errors: Int
        public var previewsSkipped: Int
        /// Messages whose reading was not kept (``WebViewLimits/maxAnalysisBytesPerSession``).
        public var analysesSkipped: Int
        public var closeReason: String?
        public var endTime: Double?
        public var isLive: Bool { endTime == nil }
    }

    init(description: SessionDescription, analyzer: SessionAnalyzer?, started: Double, limits: WebViewLimits,
         joinsSyncGatewayLog: Bool = false) {
        self.description = description
        self.analyzer = analyzer
        self.started = started
        self.limits = limits
        var state = State()
        if joinsSyncGatewayLog && description.correlationID != nil {
            // Requests older than the ring cannot be shown: no more wait for their line.
            state.syncGateway = SyncGatewayLogState(join: SessionLogJoin(maxWaiting: max(1, limits.maxMessagesPerSession)))
        }
        state.ring.reserveCapacity(min(limits.maxMessagesPerSession, 1024))
        self.state = BatchLocked(state)
    }

    // MARK: writing (the session)

    /// Holds the recording for the writing thread until ``releaseBatch()``: the writes of one
    /// input of the session take one lock between them. False if this thread holds it already.
    public func holdForBatch() -> Bool {
        guard !state.isHeldHere else { return false }
        state.hold()
        return true
    }

    /// Ends ``holdForBatch()``.
    public func releaseBatch() { state.release() }

    /// Records a complete message. `profile`: the request's profile for a reply.
    public func append(_ message: BLIPMessage, direction: BLIPDirection, time: Double, profile: String?,
                analysis: AnalyzedMessage?, roundTrip: Double?, byRelay: Bool) {
        let capacity = limits.maxMessagesPerSession
        guard capacity > 0 else { return }
        // Outside the lock: one pass over what the reading holds.
        let readingBytes = analysis?.retainedBytes ?? 0
        state.withLockedValue { state in
            let seq = state.total
            // Past the session's budget for readings the message is kept without one (its row
            // then shows its type, number and profile, and the document filter does not find it;
            // document timelines come from the session's analyzer and keep it).
            var analysis = analysis
            var keptReadingBytes = readingBytes
            if analysis != nil, state.analysisBytes + readingBytes > limits.maxAnalysisBytesPerSession {
                analysis = nil
                keptReadingBytes = 0
                state.analysesSkipped += 1
            }
            let propertyBytes = message.properties.encodedSize
            let wantsCopies = state.previewBytes + min(limits.bodyPreviewBytes, message.body.readableBytes)
                + (propertyBytes <= limits.maxPropertyBytes ? propertyBytes : 0) <= limits.maxCopiedBytesPerSession
            var record = MessageRecord(seq: seq, time: time, direction: direction, message: message, profile: profile,
                                       analysis: analysis, roundTrip: roundTrip,
                                       previewBytes: wantsCopies ? limits.bodyPreviewBytes : 0,
                                       maxPropertyBytes: wantsCopies ? limits.maxPropertyBytes : -1, byRelay: byRelay)
            if !wantsCopies && (message.body.readableBytes > 0 || propertyBytes > 0) { state.previewsSkipped += 1 }
            let ackKey = AckKey(direction: direction.rawValue, isRequest: message.type == .request, number: message.number)
            if !state.inProgress.isEmpty, let carriage = state.inProgress.removeValue(forKey: ackKey) {
                record.carriage = carriage
            }
            if message.frameCount > 1 || message.wirePayloadBytes >= Self.ackableBytes {
                let window = limits.maxMessagesInProgress
                if state.ackable.count >= 2 * window {
                    // Halves the table at least, so the sweep costs a constant per entry.
                    let oldest = seq - window
                    state.ackable = state.ackable.filter { $0.value > oldest }
                }
                state.ackable[ackKey] = seq
            }
            record.analysisBytes = keptReadingBytes
            state.analysisBytes += keptReadingBytes
            link(&record, in: &state)
            if state.syncGateway != nil, direction == .clientToServer, message.type == .request {
                // SG's lines read before the relay recorded the request they are about.
                for placed in state.syncGateway!.join.request(number: message.number, profile: profile) where placed.tag >= 0 {
                    state.syncGateway!.entries[placed.tag].request = placed.number
                }
            }
            state.messages[direction.rawValue] += 1
            state.bytes[direction.rawValue] += record.wireBytes
            if record.isError { state.errors += 1 }
            state.previewBytes += record.copiedBytes
            if state.ring.count < capacity {
                state.ring.append(record)
            } else {
                let slot = seq % capacity
                state.previewBytes -= state.ring[slot].copiedBytes
                state.analysisBytes -= state.ring[slot].analysisBytes
                state.ring[slot] = record
            }
            state.total += 1
        }
    }

    /// Pairs a reply with its request (same number, the other way) and a request with the reply
    /// to come; both records point at each other.
    func link(_ record: inout MessageRecord, in state: inout State) {
        switch record.type {
        case .request:
            guard !record.flags.isNoReply else { return }
            if state.pending.count >= 2 * limits.maxMessagesPerSession {
                // Only requests that left the ring (or leave it with this record) are forgotten:
                // the ones still kept may yet get their reply. Halving the table at most each
                // time keeps the cost of this sweep constant per request.
                let kept = state.total - limits.maxMessagesPerSession
                state.pending = state.pending.filter { $0.value > kept }
            }
            state.pending[PendingKey(direction: record.direction.rawValue, number: record.number)] = record.seq
        case .response, .error:
            let key = PendingKey(direction: record.direction.reversed.rawValue, number: record.number)
            guard let request = state.pending.removeValue(forKey: key) else { return }
            record.link = request
            let capacity = limits.maxMessagesPerSession
            if request >= state.total - state.ring.count, state.ring[request % capacity].seq == request {
                state.ring[request % capacity].link = record.seq
                state.ring[request % capacity].row = nil
            }
        default:
            return
        }
    }

    /// Frames' bytes forwarded undecoded (``SessionHistory/forwarded(sessionID:direction:bytes:)``).
    public func forwarded(_ direction: BLIPDirection, bytes: Int) {
        state.withLockedValue { $0.bytes[direction.rawValue] += bytes }
    }

    /// A frame with MoreComing set, travelling `direction` (the message's last frame is not
    /// reported: its record describes it). Compact numbers only; `time` on the session's clock.
    public func frame(_ direction: BLIPDirection, number: MessageNumber, flags: FrameFlags, wireBytes: Int, time: Double) {
        guard let type = flags.type, !type.isAck else { return }
        let key = AckKey(direction: direction.rawValue, isRequest: type == .request, number: number)
        let frame = MessageCarriage.Frame(time: time, wireBytes: Int32(clamping: wireBytes), flags: flags.rawValue)
        state.withLockedValue { state in
            if state.inProgress[key] == nil, state.inProgress.count >= limits.maxMessagesInProgress {
                state.inProgress.removeAll()
            }
            state.inProgress[key, default: MessageCarriage()].add(frame: frame, limit: limits.maxFramesPerMessage)
        }
    }

    /// An ACK sent `from` one side for a message of the other: attached to the message while it
    /// arrives, or to its record when it already arrived (an ACK for the last frames comes after
    /// them) and is among the newest ``WebViewLimits/maxMessagesInProgress`` records. One table
    /// lookup either way, whatever number the ACK names.
    public func ack(_ ack: AckInfo, from direction: BLIPDirection, time: Double = .nan) {
        let messageDirection = direction.reversed
        let key = AckKey(direction: messageDirection.rawValue, isRequest: ack.type == .ackRequest, number: ack.number)
        let mark = MessageCarriage.Ack(time: time, bytes: ack.bytes, from: direction)
        let limit = limits.maxFramesPerMessage
        state.withLockedValue { state in
            if state.inProgress[key] != nil {
                state.inProgress[key]!.add(ack: mark, limit: limit)
                return
            }
            // Otherwise an ACK for a message the relay has not seen (or too long ago): a receiver
            // ACKs only frames that came through the relay, and they were recorded first, so it
            // is bogus; dropped, so a peer cannot fill the in-progress table with it and wipe real
            // messages' frames.
            let oldest = max(state.total - state.ring.count, state.total - limits.maxMessagesInProgress)
            guard let seq = state.ackable[key], seq >= oldest else { return }
            let slot = seq % limits.maxMessagesPerSession
            guard state.ring[slot].seq == seq else { return }
            var carriage = state.ring[slot].carriage ?? MessageCarriage()
            carriage.add(ack: mark, limit: limit)
            state.ring[slot].carriage = carriage
        }
    }

    func close(reason: String, at time: Double) {
        state.withLockedValue { state in
            state.closeReason = reason
            state.endTime = time
            state.pending.removeAll()
            state.inProgress.removeAll()
            state.ackable.removeAll()
        }
    }

    /// Sync Gateway's `lines` of this session, in the order it wrote them (ignored unless the
    /// session joins SG's log).
    func addSyncGatewayLines(_ lines: some Sequence<SyncGatewayLogLine>) {
        let budget = limits.maxSyncGatewayLogBytesPerSession
        state.withLockedValue { state in
            guard var log = state.syncGateway else { return }
            state.syncGateway = nil  // no copy while it changes
            for line in lines {
                let size = line.text.utf8.count
                guard log.bytes + size <= budget else {
                    // Still joined: SG's later lines about the same request must find it.
                    _ = log.join.add(line, tag: -1)
                    log.dropped += 1
                    continue
                }
                log.bytes += size
                var request: UInt64?
                if case .request(let number) = log.join.add(line, tag: log.entries.count) { request = number }
                log.entries.append(SyncGatewayLogEntry(line: line.owned(), request: request))
            }
            state.syncGateway = log
        }
    }
}
