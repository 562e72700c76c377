import NIOCore

/// What ``SessionCore`` asks the NIO side to do, in order.
enum SessionAction: Equatable {
    /// Queue bytes on `side`'s channel (whole WebSocket frames).
    case write(SessionSide, ByteBuffer)
    case flush(SessionSide)
    /// Issue the read NIO asked for on `side` (now, or once it was held back).
    case read(SessionSide)
    /// Have `side`'s kernel acknowledge what it received at once (TCP_QUICKACK): a read ended
    /// inside a frame, and its sender may be waiting on that acknowledgement to send the rest.
    case acknowledge(SessionSide)
    case schedule(SessionTimer, TimeAmount)
    case cancel(SessionTimer)
    /// Flush what is queued on `side`, then close its connection.
    case close(SessionSide)
    /// Close `side`'s connection at once: a TCP drop passed on as a drop.
    case drop(SessionSide)
    /// Both connections are gone: the session is over (run its finish callbacks).
    case finished
}
