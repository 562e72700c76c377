import NIOCore
import ReplicationNames

/// A complete BLIP message: its type, number, flags, properties and body
/// (wire-format reference §2.2).
public struct BLIPMessage: Sendable {
    public var type: MessageType
    public var number: MessageNumber
    /// The message's flags as taken from its first frame, MoreComing cleared (§2.1).
    public var flags: FrameFlags
    public var properties: Properties
    /// The uncompressed body; when its receiver did not keep all of it (``unkeptBodyBytes``), the
    /// first bytes it kept (a preview, possibly empty).
    public var body: ByteBuffer
    /// How many frames carried it (1 for an outgoing message not yet framed).
    public var frameCount: Int = 1
    /// The payload bytes as they crossed the wire (deflated when compressed), checksums excluded.
    public var wirePayloadBytes: Int = 0
    /// The uncompressed size of the message stream: length varint, properties and body.
    public var streamBytes: Int = 0
    /// Body bytes the decoder inflated and checksummed but did not keep, because nothing was going
    /// to read them (``DirectionDecoder/stopKeepingBody(of:number:keepingFirst:)``); 0 when
    /// ``body`` is whole.
    public var unkeptBodyBytes: Int = 0

    public init(type: MessageType, number: MessageNumber = 0, flags: FrameFlags? = nil,
                properties: Properties = [:], body: ByteBuffer = ByteBuffer()) {
        self.type = type
        self.number = number
        self.flags = flags ?? FrameFlags(type: type)
        self.properties = properties
        self.body = body
    }

    /// A request with the given profile, properties and body.
    public static func request(profile: String?, properties: Properties = [:], body: ByteBuffer = ByteBuffer(),
                               compressed: Bool = false, urgent: Bool = false, noReply: Bool = false) -> BLIPMessage {
        var props = Properties()
        if let profile { props[.profile] = profile }
        for pair in properties { props[pair.key] = pair.value }
        return BLIPMessage(type: .request,
                           flags: FrameFlags(type: .request, compressed: compressed, urgent: urgent, noReply: noReply),
                           properties: props, body: body)
    }

    /// A success reply to `request`, copying its Urgent bit as LiteCore and go-blip do (§2.1).
    public static func reply(to request: BLIPMessage, properties: Properties = [:], body: ByteBuffer = ByteBuffer(),
                             compressed: Bool = false) -> BLIPMessage {
        BLIPMessage(type: .response, number: request.number,
                    flags: FrameFlags(type: .response, compressed: compressed, urgent: request.flags.isUrgent),
                    properties: properties, body: body)
    }

    /// An error reply to request `number` with `Error-Domain`, `Error-Code` and a message body (§6).
    public static func error(to number: MessageNumber, domain: String, code: Int, message: String = "",
                             urgent: Bool = false) -> BLIPMessage {
        var body = ByteBuffer()
        body.writeString(message)
        return BLIPMessage(type: .error, number: number, flags: FrameFlags(type: .error, urgent: urgent),
                           properties: Properties([.errorDomain: domain, .errorCode: String(code)]), body: body)
    }

    /// Builds a received message from its whole stream `uvarint(P) || properties || body`.
    init(decoding stream: ByteBuffer, type: MessageType, number: MessageNumber, flags: FrameFlags,
         frameCount: Int, wirePayloadBytes: Int, limits: BLIPLimits) throws(BLIPError) {
        guard stream.readableBytes <= limits.maxMessageSize else {
            throw BLIPError(.messageTooLarge, "\(type) #\(number) exceeds the \(limits.maxMessageSize)-byte message limit")
        }
        var body = stream
        let properties = try Properties.decode(from: &body, maxSize: limits.maxPropertiesSize)
        var flags = flags
        flags.hasMoreComing = false
        self.init(type: type, number: number, flags: flags, properties: properties, body: body)
        self.frameCount = frameCount
        self.wirePayloadBytes = wirePayloadBytes
        self.streamBytes = stream.readableBytes
    }

    public var isCompressed: Bool { flags.isCompressed }
    public var isUrgent: Bool { flags.isUrgent }
    public var isNoReply: Bool { flags.isNoReply }
    public var profile: String? { properties.profile }
    /// The body's length as it was sent, kept or not.
    public var bodyLength: Int { body.readableBytes + unkeptBodyBytes }
    /// False when the decoder kept at most a preview of the body.
    public var keepsBody: Bool { unkeptBodyBytes == 0 }

    /// The message stream `uvarint(P) || properties || body` that frames carry (§2.2).
    public func encodedStream(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var stream = allocator.buffer(capacity: properties.encodedSize + 5 + body.readableBytes)
        properties.encode(into: &stream)
        var body = body
        stream.writeBuffer(&body)
        return stream
    }
}

/// What is known of a message once its properties have arrived, before its body is complete.
public struct MessageHead: Sendable {
    public var type: MessageType
    public var number: MessageNumber
    public var flags: FrameFlags
    public var properties: Properties
}

/// An ACK: which message, which number space, how many bytes (§2.5).
public struct AckInfo: Sendable, Equatable {
    public var type: MessageType
    public var number: MessageNumber
    public var bytes: UInt64

    public init(type: MessageType, number: MessageNumber, bytes: UInt64) {
        self.type = type
        self.number = number
        self.bytes = bytes
    }
}
