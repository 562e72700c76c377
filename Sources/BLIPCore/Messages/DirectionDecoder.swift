import NIOCore

/// The receiving side of one direction of a BLIP connection: frame parsing, the inflater and
/// running CRC (``InboundCodec``), and message assembly for both number spaces with the ACK rule.
///
/// Rules (wire-format reference §4.4): a MSG starts request `last + 1` or continues one in
/// progress; any other MSG number is fatal. A RPY/ERR needs a pending request, registered with
/// ``expectReply(to:)`` by whoever saw the request go the other way; one for a number at or below
/// the highest registered one is ignored after the codec has run, a higher one is fatal.
/// Flags come from a message's first frame (§2.1). Properties may span frames (§2.2).
public final class DirectionDecoder {
    public let limits: BLIPLimits
    private let codec: InboundCodec
    private var lastRequestNumber: MessageNumber = 0
    private var partialRequests = MessageNumberTable<PartialMessage>()
    private var partialReplies = MessageNumberTable<PartialMessage>()
    private var awaitingReplies = MessageNumberTable<Void>()
    /// No number in ``awaitingReplies`` is below it: where the search for the oldest starts when
    /// one must be forgotten past ``BLIPLimits/maxAwaitedReplies``. Requests are numbered upwards
    /// (each new one `last + 1`, §4.4), so the search passes each number once overall; a number
    /// registered below it moves it back.
    private var oldestAwaitedReply: MessageNumber = 0
    private var highestAwaitedReply: MessageNumber = 0
    /// Requests whose replies were no longer awaited because too many were (``BLIPLimits/maxAwaitedReplies``).
    public private(set) var forgottenReplies = 0
    /// When true, each ``DecodedFrame`` carries ``DecodedFrame/payload`` and
    /// ``DecodedFrame/wirePayload`` (a relay that re-encodes needs them). Off by default: the
    /// plain decode path does no extra work.
    public var exposesPayloads = false

    /// `library` inflates and checksums (``DecodeLibrary/selected`` unless a comparison asks).
    public init(limits: BLIPLimits = .default, library: DecodeLibrary = .selected) {
        self.limits = limits
        self.codec = InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize, library: library)
    }

    /// The running CRC of everything decoded so far.
    public var checksum: UInt32 { codec.checksum.value }
    /// Messages partly received.
    public var messagesInProgress: Int { partialRequests.count + partialReplies.count }
    /// Uncompressed bytes those messages hold (bounded by ``BLIPLimits/maxBytesInProgress``); a body
    /// not kept holds none.
    public private(set) var bytesInProgress = 0
    /// Capacity reserved ahead of received bytes for those messages (bounded by
    /// ``BLIPLimits/maxReservedAssemblyBytes``).
    public private(set) var reservedAssemblyBytes = 0
    /// The whole stream of the last message of this direction that took more than one frame and
    /// kept its body: what the next one's buffer is sized for.
    private var lastAssembledBytes = 0
    /// Where a frame of a body not kept (``stopKeepingBody(of:number:keepingFirst:)``) is inflated, one frame at
    /// a time: at most ``BLIPLimits/maxInflatedFrameSize`` bytes, reused for every such frame.
    private var unkeptBody = ByteBuffer()

    /// Registers that the other direction sent request `number` which expects a reply.
    public func expectReply(to number: MessageNumber) {
        guard awaitingReplies.insert(number) else { return }
        highestAwaitedReply = max(highestAwaitedReply, number)
        oldestAwaitedReply = min(oldestAwaitedReply, number)
        while awaitingReplies.count > max(limits.maxAwaitedReplies, 0) {
            // The table is not empty, and nothing in it is below the start: the search ends.
            passAnsweredReplies()
            awaitingReplies.remove(oldestAwaitedReply)
            forgottenReplies += 1
        }
    }

    /// Moves ``oldestAwaitedReply`` up past numbers no longer awaited (answered or forgotten), to
    /// the oldest still awaited or, with none left, to the highest registered.
    ///
    /// Numbers seen on the wire come one by one (§4.4), so the walk is a step or two. Numbers far
    /// apart (a caller registering arbitrary ones) would make it as long as the gap: after as many
    /// steps as the table holds, the oldest is read from the table instead, so one call costs at
    /// most the table's size (``BLIPLimits/maxAwaitedReplies``) whatever the numbers.
    private func passAnsweredReplies() {
        var steps = awaitingReplies.count
        while oldestAwaitedReply < highestAwaitedReply, !awaitingReplies.contains(oldestAwaitedReply) {
            guard steps > 0 else {
                // Nothing in the table is below the start, so its smallest key is the oldest.
                oldestAwaitedReply = awaitingReplies.lazy.map(\.key).min() ?? highestAwaitedReply
                return
            }
            steps -= 1
            oldestAwaitedReply += 1
        }
    }

    /// The fatal error that broke the direction, if one did.
    public private(set) var failure: BLIPError?

    /// Decodes one frame (one WebSocket binary message). Fatal errors are thrown; after one the
    /// direction is broken: its partly received messages are freed at once, and every later
    /// frame is refused with the same error without being read (no inflating after a
    /// decompression bomb). Frame-level problems come back as ``DecodedFrame/Outcome/ignored(_:)``.
    public func receive(_ bytes: ByteBuffer) throws(BLIPError) -> DecodedFrame {
        if let failure { throw failure }
        do {
            return try decode(bytes)
        } catch {
            failure = error
            partialRequests.removeAll()
            partialReplies.removeAll()
            bytesInProgress = 0
            reservedAssemblyBytes = 0
            awaitingReplies.removeAll()
            throw error
        }
    }

    private func decode(_ bytes: ByteBuffer) throws(BLIPError) -> DecodedFrame {
        let checksumBefore = exposesPayloads ? codec.checksum.value : 0
        guard bytes.readableBytes <= limits.maxIncomingFrameSize else {
            throw BLIPError(.frameTooLarge,
                            "frame of \(bytes.readableBytes) bytes exceeds the \(limits.maxIncomingFrameSize)-byte limit")
        }
        let frame = try BLIPFrame.parse(bytes)
        guard let type = frame.flags.type else {
            // LiteCore skips undefined types without running the codec (§4.4).
            return DecodedFrame(number: frame.number, flags: frame.flags, wireBytes: frame.bytesAfterHeader, payloadBytes: 0,
                                outcome: .ignored(BLIPError(.unknownFrameType,
                                                            "frame #\(frame.number) has undefined type \(frame.flags.rawValue & 7)")))
        }
        if type.isAck {
            return DecodedFrame(number: frame.number, flags: frame.flags, wireBytes: frame.bytesAfterHeader, payloadBytes: 0,
                                outcome: .ack(AckInfo(type: type, number: frame.number, bytes: frame.ackedBytes)))
        }
        let classification = try classify(frame, type: type)
        if case .new = classification {
            if type == .request {
                lastRequestNumber = frame.number
            } else {
                awaitingReplies.remove(frame.number)
                if frame.number == oldestAwaitedReply { passAnsweredReplies() }
            }
            if !frame.flags.hasMoreComing {
                // A whole message in one frame, the common case: no assembly state at all. Its
                // result is built in one piece and returned as built (one filled in around the
                // `try`s was copied whole on return).
                let stream = try codec.decode(frame)
                let message = try BLIPMessage(decoding: stream, type: type, number: frame.number, flags: frame.flags,
                                              frameCount: 1, wirePayloadBytes: frame.payload.readableBytes, limits: limits)
                return DecodedFrame(number: frame.number, flags: frame.flags, wireBytes: frame.bytesAfterHeader,
                                    payloadBytes: stream.readableBytes, outcome: .data, startsMessage: true, message: message,
                                    payload: exposesPayloads ? stream : nil, wirePayload: exposesPayloads ? frame.payload : nil,
                                    checksumBefore: checksumBefore)
            }
        }
        var result = DecodedFrame(number: frame.number, flags: frame.flags, wireBytes: frame.bytesAfterHeader,
                                  payloadBytes: 0, outcome: .data)
        let partial: PartialMessage
        switch classification {
        case .new:
            result.startsMessage = true
            partial = PartialMessage(type: type, number: frame.number, flags: frame.flags)
        case .continuing(let existing):
            partial = existing
        case .orphanReply(let error):
            var scratch = ByteBuffer()
            result.payloadBytes = try codec.decode(frame, appendingTo: &scratch)
            if exposesPayloads { result.payload = scratch; result.wirePayload = frame.payload; result.checksumBefore = checksumBefore }
            result.outcome = .ignored(error)
            return result
        }
        if partial.frameCount == 0 {
            guard messagesInProgress < limits.maxMessagesInProgress else {
                throw BLIPError(.tooMuchInProgress, "more than \(limits.maxMessagesInProgress) messages partly received")
            }
            partial.stream = try codec.decode(frame)
            result.payloadBytes = partial.stream.readableBytes
            if exposesPayloads { result.payload = partial.stream }
            bytesInProgress += result.payloadBytes
        } else if partial.keepsBody {
            if partial.frameCount == 1 { reserveAssembly(for: partial) }
            let start = partial.stream.writerIndex
            result.payloadBytes = try decode(frame, appendingTo: partial)
            if exposesPayloads { result.payload = partial.stream.getSlice(at: start, length: result.payloadBytes) }
            bytesInProgress += result.payloadBytes
        } else {
            result.payloadBytes = try decode(frame, appendingTo: partial)
            if exposesPayloads { result.payload = unkeptBody }
            bytesInProgress += partial.keepOrCount(unkeptBody)
        }
        if exposesPayloads { result.wirePayload = frame.payload; result.checksumBefore = checksumBefore }
        try partial.add(frame: frame, limits: limits)
        if frame.flags.hasMoreComing {
            guard bytesInProgress <= limits.maxBytesInProgress else {
                throw BLIPError(.tooMuchInProgress, "partly received messages hold more than \(limits.maxBytesInProgress) bytes")
            }
            result.head = try partial.takeHeadIfComplete(maxPropertiesSize: limits.maxPropertiesSize)
            result.ackToSend = partial.ackDue(threshold: limits.ackThreshold)
            store(partial)
        } else {
            remove(partial)
            if partial.keepsBody { lastAssembledBytes = partial.stream.readableBytes }
            result.message = try partial.finish(limits: limits)
        }
        return result
    }

    /// Sizes `partial`'s buffer, at its second frame, for the last multi-frame message of the
    /// direction, within ``BLIPLimits/maxReservedAssemblyBytes`` for all messages in progress.
    private func reserveAssembly(for partial: PartialMessage) {
        let target = min(lastAssembledBytes, limits.maxMessageSize)
        guard target > partial.stream.capacity else { return }
        let ahead = target - partial.stream.readableBytes
        guard reservedAssemblyBytes + ahead <= limits.maxReservedAssemblyBytes else { return }
        partial.stream.reserveCapacity(partial.stream.readerIndex + target)
        partial.reservedAhead = ahead
        reservedAssemblyBytes += ahead
    }

    /// Tells the decoder that nothing will read more than the first `prefix` bytes of the body of
    /// the message in progress `type` #`number` (a relay whose observers read only the sizes of
    /// some profiles' messages, and perhaps a preview): the body received so far is dropped past
    /// the prefix, and each later frame of the message is inflated and checksummed into one
    /// reused buffer, what the prefix still lacks copied from it, the rest only counted. The
    /// stream, its CRC and every limit go on as before (``BLIPLimits/maxMessageSize`` bounds the
    /// message's whole length, kept or not); the finished message's body is the prefix and the
    /// rest's length is in ``BLIPMessage/unkeptBodyBytes``.
    ///
    /// Takes effect once the message's properties are complete (the frame that returned its
    /// ``DecodedFrame/head``); returns false before that, or for a message not in progress.
    @discardableResult
    public func stopKeepingBody(of type: MessageType, number: MessageNumber, keepingFirst prefix: Int = 0) -> Bool {
        let partial = type == .request ? partialRequests[number] : partialReplies[number]
        guard let partial, let dropped = partial.stopKeepingBody(keepingFirst: prefix) else { return false }
        bytesInProgress -= dropped
        return true
    }

    /// Appends a later frame of `partial` to its stream, or, for a body not kept, inflates it into
    /// ``unkeptBody`` (the caller keeps or counts it), inflating at most what its message may still
    /// grow by (``BLIPLimits/maxMessageSize``), so an oversized message fails before it is held.
    private func decode(_ frame: BLIPFrame, appendingTo partial: PartialMessage) throws(BLIPError) -> Int {
        let room = limits.maxMessageSize - partial.length
        do {
            if partial.keepsBody { return try codec.decode(frame, appendingTo: &partial.stream, limit: max(room, 0)) }
            unkeptBody.clear()
            return try codec.decode(frame, appendingTo: &unkeptBody, limit: max(room, 0))
        } catch where error.code == .inflatedFrameTooLarge && room < codec.maxInflatedFrameSize {
            throw BLIPError(.messageTooLarge,
                            "\(partial.type) #\(partial.number) exceeds the \(limits.maxMessageSize)-byte message limit")
        }
    }

    private enum Classification {
        case new
        case continuing(PartialMessage)
        case orphanReply(BLIPError)
    }

    private func classify(_ frame: BLIPFrame, type: MessageType) throws(BLIPError) -> Classification {
        let number = frame.number
        if type == .request {
            if let existing = partialRequests[number] { return .continuing(existing) }
            if number == lastRequestNumber &+ 1 { return .new }
            if number == 0 { throw BLIPError(.invalidMessageNumber, "MSG #0: requests are numbered from 1") }
            if number <= lastRequestNumber {
                throw BLIPError(.requestAlreadyFinished, "MSG #\(number) was already finished")
            }
            throw BLIPError(.requestNumberGap, "MSG #\(number) skips ahead; expected #\(lastRequestNumber + 1)")
        }
        if let existing = partialReplies[number] { return .continuing(existing) }
        if awaitingReplies.contains(number) { return .new }
        if number <= highestAwaitedReply {
            return .orphanReply(BLIPError(.replyWithoutRequest, "\(type) #\(number) answers no pending request"))
        }
        throw BLIPError(.replyNumberTooHigh, "\(type) #\(number) answers a request never sent")
    }

    private func store(_ partial: PartialMessage) {
        if partial.type == .request { partialRequests[partial.number] = partial }
        else { partialReplies[partial.number] = partial }
    }

    private func remove(_ partial: PartialMessage) {
        if partial.type == .request { partialRequests[partial.number] = nil }
        else { partialReplies[partial.number] = nil }
        bytesInProgress -= partial.stream.readableBytes
        reservedAssemblyBytes -= partial.reservedAhead
    }
}
