import NIOCore

/// One side of a BLIP connection as a pure state machine: what it receives goes through a
/// ``DirectionDecoder``, what it sends through an ``OutboundQueue``, and the two are joined the way
/// a peer joins them (wire-format reference §4.4, §5):
/// - a request it sends that expects a reply lets the peer answer it;
/// - ACKs it receives release its paused messages;
/// - the ACKs its decoder asks for are queued ahead of other frames.
///
/// No I/O: the caller feeds received frames in and writes ``nextFrame()`` out. Test peers, the
/// embedded gateway and replay drive it from a thin NIO handler.
public final class BLIPEndpoint {
    public let inbound: DirectionDecoder
    public let outbound: OutboundQueue

    public init(limits: BLIPLimits = .default) {
        inbound = DirectionDecoder(limits: limits)
        outbound = OutboundQueue(limits: limits)
    }

    /// Queues a request; returns its number.
    @discardableResult
    public func send(request: BLIPMessage) -> MessageNumber {
        let number = outbound.enqueueRequest(request)
        if !request.isNoReply { inbound.expectReply(to: number) }
        return number
    }

    /// Queues a reply or error to the peer's request.
    public func send(reply: BLIPMessage) {
        outbound.enqueueReply(reply)
    }

    /// Takes in one received frame. Fatal errors are thrown: the caller closes the connection.
    public func receive(_ frame: ByteBuffer) throws(BLIPError) -> DecodedFrame {
        let decoded = try inbound.receive(frame)
        if case .ack(let ack) = decoded.outcome { outbound.receivedAck(ack) }
        if let ack = decoded.ackToSend { outbound.enqueueAck(ack) }
        return decoded
    }

    /// The next frame to write, or nil when nothing is ready (everything sent, or paused for ACKs).
    public func nextFrame(allocator: ByteBufferAllocator = ByteBufferAllocator()) throws(BLIPError) -> OutgoingFrame? {
        try outbound.nextFrame(allocator: allocator)
    }
}
