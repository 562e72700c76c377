import NIOCore

/// The sending side of one BLIP connection: numbers outgoing requests, cuts messages into
/// frames, multiplexes them and applies ACK flow control (wire-format reference §4.2–§4.4, §5).
///
/// - Frames are at most ``BLIPLimits/maxFrameSize`` bytes, header and checksum included, or
///   ``BLIPLimits/urgentWaitingFrameSize`` when a normal message is sent while an urgent one is
///   next in line. A compressed frame takes at most that many *uncompressed* bytes, less the
///   header, checksum and a small allowance for deflate's worst-case growth.
/// - Round-robin: one frame of the head message, then it goes back to the tail; an urgent message
///   is placed one slot after the last queued urgent message (or right after the head), and a new
///   message never overtakes one that has not sent its first frame (§4.3).
/// - A message pauses once ``BLIPLimits/maxUnackedBytes`` of its bytes are unacknowledged and
///   resumes when an ACK brings it back under (§5).
/// - ACK frames jump the queue; they bypass the codec (§2.5).
public final class OutboundQueue {
    public let limits: BLIPLimits
    private let codec: OutboundCodec
    private var queue = CircularBuffer<OutgoingMessage>()
    private var paused: [MessageType: [MessageNumber: OutgoingMessage]] = [.request: [:], .response: [:]]
    private var pendingAcks = CircularBuffer<AckInfo>()
    /// Where a message's properties are encoded while its first frames are cut; reused, so
    /// framing allocates nothing but each frame's own buffer.
    private var headScratch = ByteBuffer()
    public private(set) var lastRequestNumber: MessageNumber = 0

    /// Room left for deflate's growth on incompressible data (well above zlib's bound for 16 KiB).
    static let deflateAllowance = 64

    public init(limits: BLIPLimits = .default) {
        self.limits = limits
        self.codec = OutboundCodec(compressionLevel: limits.compressionLevel)
    }

    /// True when a frame is ready to be produced.
    public var hasFrames: Bool { !queue.isEmpty || !pendingAcks.isEmpty }
    /// Messages queued or paused.
    public var messageCount: Int { queue.count + paused.values.reduce(0) { $0 + $1.count } }

    /// Queues a request and returns the number it was given (numbers are given at enqueue time,
    /// as go-blip does; on the wire this is the same as LiteCore's rule, §4.4).
    @discardableResult
    public func enqueueRequest(_ message: BLIPMessage) -> MessageNumber {
        lastRequestNumber += 1
        var message = message
        message.type = .request
        message.number = lastRequestNumber
        enqueue(message)
        return lastRequestNumber
    }

    /// Queues a reply (RPY or ERR) to the peer's request `message.number`.
    public func enqueueReply(_ message: BLIPMessage) {
        precondition(message.type.isReply, "enqueueReply takes RPY or ERR")
        enqueue(message)
    }

    /// Queues an ACK frame; ACKs are sent before any message frame.
    public func enqueueAck(_ ack: AckInfo) { pendingAcks.append(ack) }

    private func enqueue(_ message: BLIPMessage) {
        var flags = message.flags
        flags.rawValue = (flags.rawValue & ~FrameFlags.typeMask) | message.type.rawValue
        flags.hasMoreComing = false
        let outgoing = OutgoingMessage(type: message.type, number: message.number, flags: flags,
                                       properties: message.properties, body: message.body)
        insert(outgoing, isNew: true)
    }

    /// Applies an ACK received from the peer; a paused message that is now under the limit
    /// rejoins the queue. ACKs for unknown or finished messages are ignored (§5).
    public func receivedAck(_ ack: AckInfo) {
        let space: MessageType = ack.type == .ackRequest ? .request : .response
        if let message = paused[space]?[ack.number] {
            message.ackedBytes = max(message.ackedBytes, Int(clamping: ack.bytes))
            if !message.needsPause(limit: limits.maxUnackedBytes) {
                paused[space]?[ack.number] = nil
                insert(message, isNew: false)
            }
        } else if let message = queue.first(where: { $0.number == ack.number && $0.numberSpace == space }) {
            message.ackedBytes = max(message.ackedBytes, Int(clamping: ack.bytes))
        }
    }

    /// Produces the next frame, or nil when there is nothing to send.
    public func nextFrame(allocator: ByteBufferAllocator = ByteBufferAllocator()) throws(BLIPError) -> OutgoingFrame? {
        if !pendingAcks.isEmpty {
            let ack = pendingAcks.removeFirst()
            return OutgoingFrame(bytes: BLIPFrame.ack(ack.type, number: ack.number, bytes: ack.bytes, allocator: allocator),
                                 number: ack.number, flags: FrameFlags(type: ack.type, urgent: true, noReply: true),
                                 isLastFrame: true, chunkLength: 0)
        }
        guard !queue.isEmpty else { return nil }
        let message = queue.removeFirst()
        let frameLimit = (!message.flags.isUrgent && queue.first?.flags.isUrgent == true)
            ? limits.urgentWaitingFrameSize : limits.maxFrameSize
        var flags = message.flags
        let header = Varint.encodedLength(message.number) + 1
        var room = frameLimit - header - 4
        if flags.isCompressed { room -= Self.deflateAllowance }
        let chunkLength = min(max(room, 1), message.remainingBytes)
        var headPiece = ByteBuffer()
        if message.offset < message.headLength {
            headScratch.clear()
            message.properties.encode(into: &headScratch)
            headPiece = headScratch.getSlice(at: message.offset, length: min(message.headLength - message.offset, chunkLength))!
        }
        let bodyStart = message.body.readerIndex + max(0, message.offset - message.headLength)
        let bodyPiece = message.body.getSlice(at: bodyStart, length: chunkLength - headPiece.readableBytes)!
        message.offset += chunkLength
        let isLast = message.remainingBytes == 0
        flags.hasMoreComing = !isLast
        var bytes = allocator.buffer(capacity: chunkLength + header + 4 + Self.deflateAllowance)
        let written = try codec.encodeFrame(number: message.number, flags: flags, first: headPiece, second: bodyPiece,
                                            into: &bytes)
        message.sentBytes += bytes.readableBytes - header
        message.framesSent += 1
        if !isLast {
            if message.needsPause(limit: limits.maxUnackedBytes) {
                paused[message.numberSpace]![message.number] = message
            } else {
                insert(message, isNew: false)
            }
        }
        return OutgoingFrame(bytes: bytes, number: message.number, flags: written, isLastFrame: isLast,
                             chunkLength: chunkLength)
    }

    /// Where a message goes in the queue (§4.3).
    private func insert(_ message: OutgoingMessage, isNew: Bool) {
        let count = queue.count
        guard message.flags.isUrgent && count > 1 else {
            queue.append(message)
            return
        }
        var index = count - 1
        while index > 0 {
            let queued = queue[queue.index(queue.startIndex, offsetBy: index)]
            if queued.flags.isUrgent {
                index += 2
                break
            }
            if isNew && queued.framesSent == 0 {
                index += 1
                break
            }
            index -= 1
        }
        if index == 0 { index = 1 }
        queue.insert(message, at: queue.index(queue.startIndex, offsetBy: min(index, count)))
    }
}

/// One frame ready for the WebSocket, with what the sender needs to know about it.
public struct OutgoingFrame: Sendable {
    public var bytes: ByteBuffer
    public var number: MessageNumber
    public var flags: FrameFlags
    /// True when this frame finished its message (always true for an ACK).
    public var isLastFrame: Bool
    /// How many bytes of the message stream (uncompressed) the frame carries.
    public var chunkLength: Int
}

/// A message being sent: its remaining stream and its flow-control counters.
final class OutgoingMessage {
    let type: MessageType
    let number: MessageNumber
    let flags: FrameFlags
    let properties: Properties
    let body: ByteBuffer
    /// Bytes of `uvarint(P) || properties`: the head of the message stream (§2.2).
    let headLength: Int
    /// Bytes of the message stream already framed.
    var offset = 0
    var sentBytes = 0
    var ackedBytes = 0
    var framesSent = 0

    init(type: MessageType, number: MessageNumber, flags: FrameFlags, properties: Properties, body: ByteBuffer) {
        self.type = type
        self.number = number
        self.flags = flags
        self.properties = properties
        self.body = body
        let size = properties.encodedSize
        headLength = Varint.encodedLength(UInt64(size)) + size
    }

    var remainingBytes: Int { headLength + body.readableBytes - offset }

    /// ACKRPY covers both RPY and ERR, so replies share one number space.
    var numberSpace: MessageType { type == .request ? .request : .response }

    func needsPause(limit: Int) -> Bool { sentBytes - ackedBytes >= limit }
}
