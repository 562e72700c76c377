import NIOCore

/// A message being assembled from its frames. Holds the uncompressed message stream, or, once
/// told to stop keeping the body (``stopKeepingBody(keepingFirst:)``), its properties, the body's
/// first bytes (a preview, possibly none) and a count of the others.
final class PartialMessage {
    let type: MessageType
    let number: MessageNumber
    let flags: FrameFlags
    var stream = ByteBuffer()
    var frameCount = 0
    var wirePayloadBytes = 0
    /// Bytes after the header of every frame so far, for ACKs (§5).
    var receivedBytes = 0
    var ackedBytes = 0
    /// Capacity reserved for the message beyond what it held when it was reserved
    /// (``BLIPLimits/maxReservedAssemblyBytes``).
    var reservedAhead = 0
    private var properties: Properties?
    private var bodyOffset = 0
    /// False once the body is only counted, but for a preview (``stopKeepingBody(keepingFirst:)``).
    private(set) var keepsBody = true
    /// Body bytes counted and not kept.
    private(set) var unkeptBodyBytes = 0
    /// How many more body bytes the preview keeps.
    private var prefixRoom = 0

    /// The message stream received so far, kept or not: what ``BLIPLimits/maxMessageSize`` bounds.
    var length: Int { stream.readableBytes + unkeptBodyBytes }

    init(type: MessageType, number: MessageNumber, flags: FrameFlags) {
        self.type = type
        self.number = number
        var flags = flags
        flags.hasMoreComing = false
        self.flags = flags
    }

    func add(frame: BLIPFrame, limits: BLIPLimits) throws(BLIPError) {
        frameCount += 1
        wirePayloadBytes += frame.payload.readableBytes
        receivedBytes += frame.bytesAfterHeader
        guard length <= limits.maxMessageSize else {
            throw BLIPError(.messageTooLarge,
                            "\(type) #\(number) exceeds the \(limits.maxMessageSize)-byte message limit")
        }
    }

    /// The ACK to send now, if the unacknowledged bytes reached the threshold (§5).
    func ackDue(threshold: Int) -> AckInfo? {
        guard receivedBytes - ackedBytes >= threshold else { return nil }
        ackedBytes = receivedBytes
        return AckInfo(type: type.ackType, number: number, bytes: UInt64(receivedBytes))
    }

    /// The message head, the first time the whole properties block is present.
    func takeHeadIfComplete(maxPropertiesSize: Int) throws(BLIPError) -> MessageHead? {
        guard properties == nil else { return nil }
        var view = stream
        let decoded: Properties
        do {
            decoded = try Properties.decode(from: &view, maxSize: maxPropertiesSize)
        } catch where error.code == .truncatedVarint || error.code == .propertiesTruncated {
            return nil
        }
        properties = decoded
        bodyOffset = view.readerIndex - stream.readerIndex
        return MessageHead(type: type, number: number, flags: flags, properties: decoded)
    }

    /// Keeps only the first `prefix` bytes of the body (a preview) and counts the rest
    /// (``keepOrCount(_:)``). Returns the bytes dropped from what was held, or nil while the
    /// properties are incomplete (the body's start is not known yet: nothing changes).
    func stopKeepingBody(keepingFirst prefix: Int) -> Int? {
        guard keepsBody, properties != nil else { return nil }
        let held = stream.readableBytes - bodyOffset
        let kept = min(max(prefix, 0), held)
        stream.moveWriterIndex(to: stream.readerIndex + bodyOffset + kept)
        unkeptBodyBytes += held - kept
        prefixRoom = max(prefix, 0) - kept
        keepsBody = false
        return held - kept
    }

    /// Takes the next piece of a body not kept: what the preview still has room for is appended,
    /// the rest counted. Returns the bytes appended.
    func keepOrCount(_ piece: ByteBuffer) -> Int {
        let kept = min(prefixRoom, piece.readableBytes)
        if kept > 0 {
            stream.writeImmutableBuffer(piece.getSlice(at: piece.readerIndex, length: kept)!)
            prefixRoom -= kept
        }
        unkeptBodyBytes += piece.readableBytes - kept
        return kept
    }

    func finish(limits: BLIPLimits) throws(BLIPError) -> BLIPMessage {
        guard let properties else {
            return try BLIPMessage(decoding: stream, type: type, number: number, flags: flags, frameCount: frameCount,
                                   wirePayloadBytes: wirePayloadBytes, limits: limits)
        }
        let body = stream.getSlice(at: stream.readerIndex + bodyOffset, length: stream.readableBytes - bodyOffset)!
        var message = BLIPMessage(type: type, number: number, flags: flags, properties: properties, body: body)
        message.frameCount = frameCount
        message.wirePayloadBytes = wirePayloadBytes
        message.streamBytes = length
        message.unkeptBodyBytes = unkeptBodyBytes
        return message
    }
}
