import BLIPCore
import NIOCore

/// One direction of a mediated session: the decoder of what arrives, and, once the relay has
/// intervened in it, the encoder of what leaves (ARCHITECTURE.md "The one protocol fact").
///
/// - Pass-through (no encoder): each frame leaves as it came; ``forwardedChecksum`` follows the
///   CRC the receiver has accumulated.
/// - Re-encoding (from the first intervention to the end of the session): every frame is rebuilt
///   with the relay's number and a CRC that continues from ``forwardedChecksum`` over what the
///   relay actually sends (§2.4). Compressed payloads are copied as sent until a compressed frame
///   is held, dropped or replaced (``deflateBroken``); from then on the relay's own deflater
///   re-deflates every compressed frame, starting a new raw-deflate stream (§3.2, §3.3).
final class MediatedDirection {
    let direction: BLIPDirection
    let decoder: DirectionDecoder
    let limits: MediationLimits
    private(set) var encoder: OutboundCodec?
    /// The CRC of everything forwarded unchanged (what the receiver has checked so far).
    var forwardedChecksum: UInt32 = 0
    /// Set once the receiver's inflater can no longer follow the sender's deflate stream.
    private(set) var deflateBroken = false
    var numbers: MessageNumberMap
    var messages: [MessageKey: MediatedMessage] = [:]
    /// Requests whose first frame has not left yet, in arrival order: none may overtake (§4.3).
    var gate = CircularBuffer<MediatedMessage>()
    /// Bytes received in this direction and held until a timer fires (``MediationLimits/maxDelayedBytes``).
    private(set) var delayedBytes = 0
    /// Bytes of requests that passed but wait in ``gate`` behind one still held.
    private(set) var gatedBytes = 0
    /// The most ``delayedBytes`` plus ``gatedBytes`` has been.
    private(set) var peakDelayedBytes = 0
    private let allocator = ByteBufferAllocator()

    init(direction: BLIPDirection, limits: MediationLimits) {
        self.direction = direction
        self.limits = limits
        decoder = DirectionDecoder(limits: limits.decoder)
        numbers = MessageNumberMap(maxAwaited: limits.decoder.maxAwaitedReplies)
        decoder.exposesPayloads = true
    }

    var isReencoding: Bool { encoder != nil }

    /// `bytes` more are held waiting for a timer (negative: a timer released them).
    func chargeDelayed(_ bytes: Int) {
        delayedBytes += bytes
        peakDelayedBytes = max(peakDelayedBytes, delayedBytes + gatedBytes)
    }

    /// `bytes` more wait in the gate behind a held request (negative: they left).
    func chargeGated(_ bytes: Int) {
        gatedBytes += bytes
        peakDelayedBytes = max(peakDelayedBytes, delayedBytes + gatedBytes)
    }

    /// What counts against ``MediationLimits/maxDelayedBytes``: the bytes held for timers, plus
    /// the requests waiting behind them when the gate's first request waits for a timer (a delay,
    /// or the link of a paced request). When
    /// it waits for its own later frames instead (or nothing holds the gate), only reading on
    /// lets the gate move, so the requests behind it do not count.
    var budgetedBytes: Int {
        switch gate.first?.disposition {
        case .delayed, .paced: delayedBytes + gatedBytes
        default: delayedBytes
        }
    }

    /// Switches to re-encoding for the rest of the session (idempotent).
    func switchToReencoding() {
        guard encoder == nil else { return }
        encoder = OutboundCodec(compressionLevel: limits.compressionLevel, resumingChecksum: forwardedChecksum)
    }

    /// A compressed frame of the sender's stream will not reach the receiver in its place.
    func breakDeflateStream() { deflateBroken = true }

    /// Builds one frame. `wirePayload` is the payload as the sender sent it, nil for a frame the
    /// relay builds or held. An empty compressed chunk is sent uncompressed (§3.5).
    func encodeFrame(number: MessageNumber, flags: FrameFlags, chunk: ByteBuffer, wirePayload: ByteBuffer?,
                     into output: inout MediatorOutput) throws(BLIPError) {
        switchToReencoding()
        let encoder = encoder!
        var bytes = allocator.buffer(capacity: chunk.readableBytes + 24 + (flags.isCompressed ? 64 : 0))
        if let wirePayload, !(flags.isCompressed && deflateBroken) {
            encoder.encodeFrame(number: number, flags: flags, wirePayload: wirePayload, chunk: chunk, into: &bytes)
        } else {
            if flags.isCompressed { deflateBroken = true }
            try encoder.encodeFrame(number: number, flags: flags, chunk: chunk, into: &bytes)
        }
        output.append(MediatedSend(direction: direction, payload: .bytes(bytes)))
    }

    /// Frames a whole message the relay sends (a reply in a peer's place, a replacement, a
    /// message its body rule let through), in frames of at most ``MediationLimits/maxFrameSize``.
    /// The body is framed in slices, not copied: only the frame the properties end in is built.
    /// Returns how many frames it took.
    @discardableResult
    func encodeMessage(number: MessageNumber, type: MessageType, flags: FrameFlags, properties: Properties,
                       body: ByteBuffer, into output: inout MediatorOutput) throws(BLIPError) -> Int {
        var head = allocator.buffer(capacity: properties.encodedSize + 5)
        properties.encode(into: &head)
        var body = body
        var flags = flags
        flags.rawValue = (flags.rawValue & ~FrameFlags.typeMask) | type.rawValue
        let room = limits.maxFrameSize - Varint.encodedLength(number) - 1 - 4 - (flags.isCompressed ? 64 : 0)
        var frames = 0
        repeat {
            let fromHead = min(room, head.readableBytes)
            let fromBody = min(room - fromHead, body.readableBytes)
            var chunk: ByteBuffer
            if fromHead == 0 {
                chunk = body.readSlice(length: fromBody)!
            } else {
                chunk = head.readSlice(length: fromHead)!
                if fromBody > 0 { chunk.writeImmutableBuffer(body.readSlice(length: fromBody)!) }
            }
            flags.hasMoreComing = head.readableBytes + body.readableBytes > 0
            try encodeFrame(number: number, flags: flags, chunk: chunk, wirePayload: nil, into: &output)
            frames += 1
        } while head.readableBytes + body.readableBytes > 0
        return frames
    }
}
