import NIOCore
import WebSocketWire

/// Puts one direction's WebSocket messages back together, unmasked, for decoding: a whole
/// message in one frame is its (unmasked) payload; a fragmented one is collected until its
/// final frame (RFC 6455 §5.4).
///
/// Limit: at most `maxMessageSize` bytes are collected (``RelayLimits/maxWebSocketMessageSize``);
/// a bigger message is reported as `tooLarge` at its final frame and nothing of it is kept.
struct WebSocketMessageAssembler {
    private let maxMessageSize: Int
    private let allocator: ByteBufferAllocator
    private var fragments: ByteBuffer?
    private var overflowed = false

    init(maxMessageSize: Int, allocator: ByteBufferAllocator) {
        self.maxMessageSize = maxMessageSize
        self.allocator = allocator
    }

    /// Takes one data frame (`payload` as received, still masked when `header` has a key); returns
    /// the message it completes, nil while a fragmented message is incomplete.
    mutating func add(_ header: WebSocketFrameHeader, payload: ByteBuffer) -> (message: ByteBuffer?, tooLarge: Bool) {
        let continues = header.opcode == WebSocketFrameHeader.continuation
        if header.fin && fragments == nil && !continues {
            return (Self.unmasked(payload, header.maskingKey, allocator), false)
        }
        if !continues {
            fragments = allocator.buffer(capacity: payload.readableBytes)
            overflowed = false
        }
        if !overflowed, var buffer = fragments {
            fragments = nil  // keep the buffer uniquely referenced while appending
            if buffer.readableBytes + payload.readableBytes > maxMessageSize {
                overflowed = true
            } else {
                var part = Self.unmasked(payload, header.maskingKey, allocator)
                buffer.writeBuffer(&part)
                fragments = buffer
            }
        }
        guard header.fin else { return (nil, false) }
        defer { fragments = nil; overflowed = false }
        return overflowed ? (nil, true) : (fragments, false)
    }

    /// `payload` unmasked: a copy when masked, the slice itself when not.
    static func unmasked(_ payload: ByteBuffer, _ key: WebSocketMaskingKey?, _ allocator: ByteBufferAllocator) -> ByteBuffer {
        guard let key else { return payload }
        return key.applied(to: payload, allocator: allocator)
    }
}
