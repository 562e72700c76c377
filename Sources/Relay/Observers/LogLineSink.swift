/// Where ``LoggingObserver`` can write its lines as bytes: the relay's own log file or standard
/// output. The relay logs every message on its event loops; through swift-log each line would
/// become a `String`, a `Logger.Message` and a `LogEvent` that the handler copies out again.
/// Given a sink, the observer copies each line's bytes once, from its thread's scratch buffer.
/// Without one, lines go through the observer's `Logger` as before (a library user's handler).
///
/// Called on several event-loop threads at once: a sink orders and guards its own buffer. It must
/// not block for long (batch, then write outside the calling thread's hot path).
public protocol LogLineSink: AnyObject, Sendable {
    /// Appends one or more complete lines, each ending in a newline (`\n`), as valid UTF-8. The
    /// bytes are lent for the call only.
    func write(lines: UnsafeRawBufferPointer)
}
