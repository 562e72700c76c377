/// One session's log lines of one input (``SessionObserver/batchEnded()``), collected on its event
/// loop and handed to the relay's ``LogLineSink`` together: the sink's lock is taken once per
/// read batch, not once per message.
///
/// Limit: a batch that reaches ``handOverBytes`` is handed over at once, so a session holds at
/// most that much (plus one line) whatever one read brings. Lines of one session stay in order;
/// lines of sessions on other event loops may come between two of its batches.
///
/// `@unchecked Sendable` (``LogLineSink`` asks it): confined to its session's event loop.
final class LogLineBatch: LogLineSink, @unchecked Sendable {
    /// Bytes of lines after which the batch goes to the sink without waiting for the input's end.
    static let handOverBytes = 32 * 1024

    private let sink: any LogLineSink
    private var lines: [UInt8] = []

    init(handingTo sink: any LogLineSink) { self.sink = sink }

    func write(lines bytes: UnsafeRawBufferPointer) {
        lines.append(contentsOf: bytes)
        if lines.count >= Self.handOverBytes { handOver() }
    }

    /// Gives the collected lines to the sink, if any, and frees the buffer: an idle session
    /// holds no log bytes (one allocation per batch is what that costs).
    func handOver() {
        guard !lines.isEmpty else { return }
        lines.withUnsafeBytes { sink.write(lines: $0) }
        lines = []
    }
}
