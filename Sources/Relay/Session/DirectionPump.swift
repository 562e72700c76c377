import BLIPCore
import NIOCore
import NIOWebSocket

/// Moves one direction's WebSocket traffic across the relay (ARCHITECTURE.md "One picture").
///
/// Pass-through, today's only mode: data frames are written to the destination hop as the bytes
/// they arrived as (client frames keep their mask, reference notes §1), each run of them in one
/// read as one slice of the received buffer (``forward(raw:to:)``); then an unmasked copy of each
/// complete WebSocket message goes to the session's inspector. PING is answered on the
/// hop it came from and PONG is dropped (keep-alive is per hop, wire-format reference §1.1);
/// CLOSE goes to the session, which passes it on.
///
/// A mediating session (one with a ``SessionMediator``) decodes first and then uses
/// ``forward(raw:to:)`` for frames left unchanged and ``send(blipFrame:to:)`` for frames it built.
final class DirectionPump {
    let direction: BLIPDirection
    private let maxMessageSize: Int
    private let allocator: ByteBufferAllocator
    /// Unmasked payload of a fragmented WebSocket message being reassembled for inspection.
    private var fragments: ByteBuffer?
    private var fragmentsOverflowed = false
    /// Frames that arrived before the destination hop existed (the upstream may speak first,
    /// before the client's 101 is out). At most one read's worth: reading is held meanwhile.
    private var held: [ByteBuffer] = []

    init(direction: BLIPDirection, maxMessageSize: Int, allocator: ByteBufferAllocator) {
        self.direction = direction
        self.maxMessageSize = maxMessageSize
        self.allocator = allocator
    }

    /// Writes received frames, `bytes` exactly as they arrived, to `destination`.
    func forward(raw bytes: ByteBuffer, to destination: HopHandler?) {
        send(bytes, to: destination)
    }

    /// Writes a BLIP frame the relay built (a mediating session's re-encoded or injected frame)
    /// as one WebSocket binary message, masked toward the upstream (the relay is its client).
    /// Returns the bytes written.
    @discardableResult
    func send(blipFrame: ByteBuffer, to destination: HopHandler?) -> Int {
        let bytes = RawFrame.make(opcode: .binary, payload: blipFrame, masked: direction == .clientToServer,
                                  allocator: allocator)
        send(bytes, to: destination)
        return bytes.readableBytes
    }

    private func send(_ bytes: ByteBuffer, to destination: HopHandler?) {
        if let destination, held.isEmpty { destination.write(bytes) } else { held.append(bytes) }
    }

    /// Writes what was held back to the now-present destination.
    func releaseHeld(to destination: HopHandler) {
        let pending = held
        held.removeAll()
        for bytes in pending { destination.write(bytes) }
        destination.flush()
    }

    /// The payload of `frame` unmasked, for answering PINGs and reading CLOSEs.
    func unmasked(_ frame: WebSocketFrame) -> ByteBuffer { unmasked(frame.data, mask: frame.maskKey.map(RawFrame.mask(of:))) }

    /// A payload as received, unmasked when `mask` is set (a copy then; the slice itself if not).
    private func unmasked(_ payload: ByteBuffer, mask: UInt32?) -> ByteBuffer {
        guard let mask else { return payload }
        return RawFrame.xorCopy(payload, mask: mask, allocator: allocator)
    }

    /// The complete WebSocket message `frame` finishes, unmasked, for the inspector; nil while a
    /// fragmented message is incomplete. `tooLarge` reports a message over the reassembly limit.
    func message(completedBy frame: WebSocketFrame) -> (bytes: ByteBuffer?, tooLarge: Bool) {
        message(fin: frame.fin, opcode: frame.opcode, mask: frame.maskKey.map(RawFrame.mask(of:)), payload: frame.data)
    }

    /// ``message(completedBy:)`` for a frame given as its header fields and its payload as
    /// received (masked when `mask`, ``WebSocketFrameHeader/mask``, is set).
    func message(fin: Bool, opcode: WebSocketOpcode, mask: UInt32?,
                 payload: ByteBuffer) -> (bytes: ByteBuffer?, tooLarge: Bool) {
        let length = payload.readableBytes
        if fin && fragments == nil && opcode != .continuation {
            return (unmasked(payload, mask: mask), false)
        }
        if opcode != .continuation {
            fragments = allocator.buffer(capacity: length)
            fragmentsOverflowed = false
        }
        if !fragmentsOverflowed, var buffer = fragments {
            fragments = nil  // keep the buffer uniquely referenced while appending
            if buffer.readableBytes + length > maxMessageSize {
                fragmentsOverflowed = true
            } else {
                var part = unmasked(payload, mask: mask)
                buffer.writeBuffer(&part)
                fragments = buffer
            }
        }
        guard fin else { return (nil, false) }
        defer { fragments = nil; fragmentsOverflowed = false }
        return fragmentsOverflowed ? (nil, true) : (fragments, false)
    }
}
