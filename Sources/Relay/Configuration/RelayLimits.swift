import BLIPCore
import NIOCore

/// The relay's limits as named configuration. Together they bound a session's memory
/// (docs/relay.md, "Memory per session"): per direction one socket read, one WebSocket frame being
/// parsed, a write buffer up to the high-water mark, one WebSocket message being reassembled for
/// the decoder, and the decoder's own state.
public struct RelayLimits: Sendable, Equatable {
    /// Largest WebSocket frame either side may send; a bigger one closes the session with 1009.
    /// LiteCore accepts 1 MiB (wire-format reference §1.1).
    public var maxWebSocketFrameSize = 1 << 20
    /// Largest WebSocket message reassembled from fragments for decoding. Forwarding does not
    /// depend on it: a bigger message is forwarded and reported as a decode error.
    public var maxWebSocketMessageSize = 1 << 20
    /// A side stops being read when its partner's write buffer passes the high-water mark, and
    /// resumes below the low-water mark.
    public var writeBufferLowWater = 32 * 1024
    public var writeBufferHighWater = 128 * 1024
    /// Socket reads on either hop: each asks for a buffer of ``readBufferMinimum`` bytes at least,
    /// doubling after reads that fill it up to ``readBufferMaximum``, and halving after reads that
    /// leave it mostly empty, never below the minimum. NIO's default starts at 2 KiB and shrinks
    /// to 64 bytes: on runs of small BLIP messages the relay's reads then came back full and were
    /// followed by another read (go-blip A: 0.73 reads per round trip, nginx 0.63; with 2 KiB at
    /// least, 0.67). A read's buffer lives until its frames are forwarded and inspected, and NIO
    /// keeps each channel's last one to read into again, so an idle session holds one per hop: a
    /// larger minimum costs every idle session that much more (4 KiB: +4 KiB each, for 0.02 fewer
    /// reads per round trip).
    public var readBufferMinimum = 2 * 1024
    public var readBufferMaximum = 64 * 1024

    /// The allocator each of a session's channels reads with: from ``readBufferMinimum`` (64 bytes
    /// at least), where it starts, to ``readBufferMaximum`` (never below the minimum); NIO rounds
    /// the sizes to powers of two.
    var readAllocator: AdaptiveRecvByteBufferAllocator {
        let minimum = max(64, readBufferMinimum)
        let maximum = max(minimum, readBufferMaximum)
        return AdaptiveRecvByteBufferAllocator(minimum: minimum, initial: minimum, maximum: maximum)
    }
    /// A client's masked messages are unmasked into a copy for decoding; after a message whole in
    /// one frame, its buffer is kept for the next one when its capacity is at most this (NIO
    /// rounds capacities to powers of two). On runs of small messages that saves an allocation and
    /// a free per message; a session that goes idle holds at most this much more. 0: never kept.
    public var unmaskBufferKept = 4 * 1024
    /// Limits of the passive BLIP decoders (one per direction).
    /// Messages up to 24 MiB are decoded: Sync Gateway stores documents of up to 20 MB
    /// (`max_document_size`), and the analyzer reads a rev's whole body.
    public var decoder: BLIPLimits = {
        var limits = BLIPLimits.default
        limits.maxMessageSize = 24 * 1024 * 1024
        return limits
    }()
    /// Bytes of partly received BLIP messages the decoders may hold, both directions together.
    /// Past it the session stops decoding (logged; forwarding goes on, `--strict` closes).
    /// Sync Gateway sends the revs of a pull several at a time, their frames interleaved: a
    /// pull of a 15 MB, two 5 MB and another 15 MB document had more than 16 MiB in progress at
    /// once (SG 3.2.8), so room for three of its largest documents.
    public var maxDecoderBytesInProgress = 64 * 1024 * 1024
    /// Bytes of partly received messages all mediating sessions together may hold (each one
    /// also within ``BLIPLimits/maxBytesInProgress`` per direction); the session that would take
    /// the total past it ends with 1011.
    public var maxRelayBytesInProgress = 512 * 1024 * 1024
    /// Requests awaiting a reply that are remembered for round-trip times, per direction.
    public var maxTrackedRequests = 4096
    /// Forwarded frames wait this long at most to be decoded, analysed and logged, so that one
    /// inspection covers the frames of several socket reads: decoding, analysing and logging
    /// messages in runs took 10–20 % less user CPU than one read at a time on small messages, at
    /// the same instruction count (the code and tables stay in cache). Frames are always reported
    /// at the time they were read, both directions in the order they arrived. Zero: each read is
    /// inspected right after it is flushed. A CLOSE, a dropped connection and the end of the
    /// session inspect at once.
    ///
    /// Each wait is one timer: a `timerfd_settime` and a wake-up of the event loop when it fires.
    /// Under a steady stream a batch that fills (``inspectionBatchFrames``) is inspected at once
    /// and leaves the timer armed, so the delay bounds how many timers a busy session arms: on
    /// go-blip's 300-byte echoes, 8 in flight, about 0.06 per round trip at 5 ms and 0.02 at
    /// 20 ms, which measured the same relay CPU. A line appears at most this long after its
    /// traffic, and a pcap shared by several sessions holds packets up to this much out of time
    /// order across them.
    public var inspectionDelay: TimeAmount = .milliseconds(5)
    /// ...or until this many forwarded frames wait, both directions together.
    public var inspectionBatchFrames = 64
    /// ...or until the waiting frames hold this many bytes: their payloads, plus the buffer of
    /// each socket read they came in, which their slices keep alive. A batch that fills, even
    /// inside one read, is inspected at once: a session's waiting frames hold at most this plus
    /// the frame that filled it.
    public var inspectionBatchBytes = 256 * 1024
    /// After a read batch that ends inside a WebSocket frame, ask the kernel to acknowledge the
    /// bytes at once (`TCP_QUICKACK`, one `setsockopt` per such batch; Linux only). Senders that
    /// write frames in pieces (Sync Gateway's 16 KiB frames) otherwise wait for the receiver's
    /// delayed acknowledgement, 40 ms at least on Linux, whenever nothing travels back: the relay
    /// forwards whole frames only, so it sends nothing back mid-frame (docs/sync-gateway-behaviour.md).
    public var acknowledgeMidFrame = true

    public init() {}
}
