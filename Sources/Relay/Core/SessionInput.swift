import NIOCore

/// What happens to a session, as ``SessionCore`` takes it: everything the NIO side learns from
/// its two channels and its timers, and nothing else. The inputs whose handling reports a time
/// (frames read, the session's open and close, timers) carry the time the shell read them at:
/// the core reads no clock.
enum SessionInput {
    /// `side`'s hop is in place (its 101 is out); once both are, the session is open.
    case attached(SessionSide, at: ReceiptTime)
    /// Bytes read on `side`.
    case bytes(SessionSide, ByteBuffer, at: ReceiptTime)
    /// `side`'s read batch is over (NIO's `channelReadComplete`).
    case readComplete(SessionSide)
    /// NIO asks to read from `side`; answered with ``SessionAction/read(_:)`` or held.
    case readRequested(SessionSide)
    /// `side`'s channel became writable, or stopped being so.
    case writability(SessionSide, isWritable: Bool)
    /// After a flush `side`'s channel stayed above its high-water mark with this many bytes queued.
    case buffered(SessionSide, bytes: Int)
    case timerFired(SessionTimer, at: ReceiptTime)
    /// `side`'s connection closed (with or without a CLOSE frame before it).
    case connectionClosed(SessionSide, at: ReceiptTime)
    /// `side`'s channel failed for a reason other than its framing; the core drops that side.
    case channelFailed(SessionSide)
    /// An observer holds, or releases, reading from both peers (``SessionReadGate``).
    case holdReading, releaseReading
    /// The relay is shutting down: 1001 to both sides.
    case shutDown(at: ReceiptTime)
}

/// A timer the NIO side arms for the core.
enum SessionTimer: Hashable, Sendable {
    /// The idle check, every quarter of the idle timeout (``IdleWatch``).
    case idleCheck
    /// The closing handshake's time limit (``RelayConfiguration/closeTimeout``).
    case closeTimeout
    /// A mediator timer (a delay, a held ACK), by its token.
    case mediation(UInt64)
    /// The forwarded frames waiting for inspection are due (``RelayLimits/inspectionDelay``).
    case inspection
}
