import NIOCore
import WebSocketWire

/// Puts one direction's WebSocket messages back together, unmasked, for decoding: a whole
/// message in one frame is its (unmasked) payload; a fragmented one is collected until its
/// final frame (RFC 6455 §5.4).
///
/// Limits: at most `maxMessageSize` bytes are collected (``RelayLimits/maxWebSocketMessageSize``);
/// a bigger message is reported as `tooLarge` at its final frame and nothing of it is kept.
/// A masked message whole in one frame is unmasked into a buffer kept for the next one when its
/// capacity is at most `keptBufferCapacity` (``RelayLimits/unmaskBufferKept``): on runs of small
/// messages that saves an allocation and a free per message. The buffer is only written again
/// once nothing else holds it (a decoded body, a capture's copy); until then the next message
/// gets a fresh one, as `ByteBuffer`'s copy-on-write makes it.
struct WebSocketMessageAssembler {
    private let maxMessageSize: Int
    private let keptBufferCapacity: Int
    private let allocator: ByteBufferAllocator
    private var fragments: ByteBuffer?
    private var overflowed = false
    /// The buffer the last small masked message was unmasked into.
    private var kept: ByteBuffer?

    init(maxMessageSize: Int, keptBufferCapacity: Int = 0, allocator: ByteBufferAllocator) {
        self.maxMessageSize = maxMessageSize
        self.keptBufferCapacity = keptBufferCapacity
        self.allocator = allocator
    }

    /// The capacity of the buffer kept for the next masked message (0: none).
    var keptCapacity: Int { kept?.capacity ?? 0 }

    /// Takes one data frame (`payload` as received, still masked when `header` has a key); returns
    /// the message it completes, nil while a fragmented message is incomplete.
    mutating func add(_ header: WebSocketFrameHeader, payload: ByteBuffer) -> (message: ByteBuffer?, tooLarge: Bool) {
        let continues = header.opcode == WebSocketFrameHeader.continuation
        if header.fin && fragments == nil && !continues {
            guard let key = header.maskingKey else { return (payload, false) }
            return (unmaskedKeeping(payload, key), false)
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

    /// `payload` unmasked into the kept buffer (cleared; a new one when another holder shares it
    /// or it is too small), which stays kept when it is within ``keptBufferCapacity``.
    private mutating func unmaskedKeeping(_ payload: ByteBuffer, _ key: WebSocketMaskingKey) -> ByteBuffer {
        guard payload.readableBytes <= keptBufferCapacity, var buffer = kept.take() else {
            let buffer = key.applied(to: payload, allocator: allocator)
            if kept == nil, buffer.capacity <= keptBufferCapacity { kept = buffer }
            return buffer
        }
        buffer.clear(minimumCapacity: payload.readableBytes)
        key.write(payload, maskedTo: &buffer)
        if buffer.capacity <= keptBufferCapacity { kept = buffer }
        return buffer
    }

    /// `payload` unmasked: a copy when masked, the slice itself when not.
    static func unmasked(_ payload: ByteBuffer, _ key: WebSocketMaskingKey?, _ allocator: ByteBufferAllocator) -> ByteBuffer {
        guard let key else { return payload }
        return key.applied(to: payload, allocator: allocator)
    }
}
