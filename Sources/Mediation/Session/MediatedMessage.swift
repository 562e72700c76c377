import BLIPCore
import NIOCore

/// One message the mediator is routing, from its first frame to its last.
final class MediatedMessage {
    enum Disposition {
        /// Properties not complete yet: frames are held.
        case undecided
        /// Frames flow as they come (a request only once it left the request gate).
        case forward
        /// Held until the timer with this token fires.
        case delayed(UInt64)
        /// Each frame held for its own transfer time on a link of this rate, then sent in order
        /// (``paceDue`` holds when each held frame not yet through will be; one timer at a time,
        /// armed while ``paceDue`` is not empty, for its first).
        case paced(bytesPerSecond: Int)
        /// Held until complete, then the policy sees the body.
        case awaitingBody
        /// Frames are dropped; at the last frame this reply (if any) goes back to the sender.
        case swallow(RelayReply?)
        /// A reply held until complete, then rewritten for the original requester.
        case rewriteReply(ReplyRewrite)
        /// Sent as this new message instead (properties and body), framed by the relay.
        case replaced(BLIPMessage)
    }

    let type: MessageType
    /// The number as the sender gave it.
    let number: MessageNumber
    let flags: FrameFlags
    var head: MediatedHead?
    var disposition: Disposition = .undecided
    /// Frames received but not yet sent: uncompressed chunks with the flags they came with.
    var held: [(flags: FrameFlags, chunk: ByteBuffer)] = []
    /// A message its body rule let through or delayed: the complete message as the decoder
    /// assembled it for the rule, framed anew when it may leave. Its frames were not also held
    /// one by one (``held`` stays empty), so it is in memory once.
    var whole: BLIPMessage?
    /// The number it leaves with: requests once out of the gate; replies mapped at the first frame.
    var forwardedNumber: MessageNumber?
    /// For a request: the reply rewrite to register when it is numbered.
    var replyRewrite: ReplyRewrite?
    /// For a request the relay replaced: what its sender gets once the request's last frame is in.
    var answerWhenComplete: RelayReply?
    var isComplete = false
    /// A request the relay kept from its receiver (denied or dropped; a `rev` is replaced by a
    /// ``NoRevNotice``): reported with its last frame (``MediatorOutput/completedWithheld``).
    var withheld = false
    /// Bytes of ``held`` charged as waiting in the gate (``MediatedDirection/chargeGated(_:)``).
    var gatedBytes = 0
    /// Set once its last frame has been sent (or it was swallowed whole).
    var isDone = false
    /// A paced message: when each frame of ``held`` that the link has not carried yet will have
    /// been, in order (the last ``paceDue.count`` frames of ``held``).
    var paceDue = CircularBuffer<NIODeadline>()
    /// A paced message whose pacing is still to be reported: who decided it (reported once, at
    /// its first frame, with that frame's hold).
    var paceRuling: Ruling?

    init(type: MessageType, number: MessageNumber, flags: FrameFlags) {
        self.type = type
        self.number = number
        var flags = flags
        flags.hasMoreComing = false
        self.flags = flags
    }

    var isRequest: Bool { type == .request }
    /// Whether the mediator reads the message whole once it is complete: undecided yet, or
    /// decided on or rewritten by its body. Every other disposition takes its frames one by one.
    var readsWholeBody: Bool {
        switch disposition {
        case .undecided, .awaitingBody, .rewriteReply: true
        case .forward, .delayed, .paced, .swallow, .replaced: false
        }
    }
    /// Bytes of the chunks in ``held``, or of ``whole``'s properties and body.
    var heldBytes: Int {
        held.reduce(0) { $0 + $1.chunk.readableBytes } + (whole.map { $0.properties.encodedSize + $0.body.readableBytes } ?? 0)
    }
    /// A paced message: the first frames of ``held`` that the link has carried, waiting to go.
    var dueFrames: Int { held.count - paceDue.count }
    /// Nothing of it waits to be sent.
    var holdsNothing: Bool { held.isEmpty && whole == nil }
    /// Whether the receiver will answer what is forwarded: a replacement's own flags decide.
    var expectsReply: Bool {
        guard isRequest else { return false }
        if case .replaced(let replacement) = disposition { return !replacement.flags.isNoReply }
        return !flags.isNoReply
    }
}

/// A reply the relay sends in a peer's place.
enum RelayReply {
    case error(ErrorReply)
    case answer(Properties, ByteBuffer)
}

/// A message's identity within one direction: its number space and number.
struct MessageKey: Hashable {
    var isRequest: Bool
    var number: MessageNumber
}
