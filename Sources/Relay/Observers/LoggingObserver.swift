import BLIPCore
import Foundation
import Logging
import NIOCore
import Replication

/// Logs sessions and messages through swift-log, as text or JSON lines (the executable chooses
/// where they go). Levels: session open/close and refused handshakes at `info`; one line per
/// complete BLIP message at `info`; the analyzer's findings (once each, when first made) and
/// decode errors at `warning`; frames, ACKs and flow control at
/// `debug`; message bodies (or, with redaction, their size and hash) at `trace`.
///
/// Secrets never appear: the session carries only the user name (never the `Authorization` or
/// `Cookie` value), and properties whose names look like credentials are shown as `<redacted>`.
/// Lines are built only when the logger's level lets them through.
///
/// With a ``LogLineSink`` (the `blipscope` command's log file or standard output), lines are
/// written to it as bytes and the logger only sets the level; without one, they go through the
/// logger's handler as `String`s.
public struct LoggingObserver: RelayObserver {
    public let logger: Logger
    public let format: RelayConfiguration.LogFormat
    public let redactBodies: Bool
    public let interests: RelayEventInterests
    /// Where lines go as bytes (nil: through `logger`).
    public private(set) var sink: (any LogLineSink)?
    /// The logger's level, read once: `logger.logLevel` asks its handler each time.
    private let level: Logger.Level
    /// Whether message lines carry their body: the logger (a constant) lets `trace` through.
    private let withBody: Bool

    public init(logger: Logger, format: RelayConfiguration.LogFormat = .text, redactBodies: Bool = false,
                sink: (any LogLineSink)? = nil) {
        self.logger = logger
        self.format = format
        self.redactBodies = redactBodies
        self.sink = sink
        level = logger.logLevel
        var interests: RelayEventInterests = []
        // The session's analyzer reads each message in replication terms for its line, and sums
        // up each session at close.
        if level <= .info { interests.formUnion([.sessions, .messages, .analysis]) }
        else if level <= .warning { interests.insert(.messages) }
        if level <= .debug { interests.insert(.frames) }
        withBody = level <= .trace
        // Message lines at `trace` carry the body (or its size and hash).
        if withBody { interests.insert(.messageBodies) }
        self.interests = interests
    }

    public func observe(_ event: RelayEvent) {
        let line = LogLine(format: format, redactBodies: redactBodies, withBody: withBody)
        switch event {
        case .sessionOpened(let info):
            if level <= .info { emit(.info, line.opened(info)) }
        case .sessionClosed(let summary):
            guard level <= .info else { return }
            emit(.info, line.closed(summary))
            if let replication = summary.replication { emit(.info, line.replicationSummary(summary.info.id, replication)) }
        case .handshakeRefused(let refusal):
            if level <= .info { emit(.info, line.refused(refusal)) }
        case .proxyRefused(let refusal):
            if level <= .info { emit(.info, line.proxyRefused(refusal)) }
        case .drain(let phase):
            if level <= .info { emit(.info, line.drain(phase)) }
        case .message(let event):
            observe(message: event)
        case .messageHead, .forwarded:
            break
        case .decodeError(let id, let direction, let error):
            if level <= .warning { emit(.warning, line.decodeError(id, direction, error)) }
        case .frame(let frame):
            if level <= .debug { emit(.debug, line.frame(frame)) }
        case .ack(let id, let direction, let ack, let time):
            if level <= .debug { emit(.debug, line.ack(id, direction, ack, at: time)) }
        case .flowControl(let id, let direction, let paused):
            if level <= .debug { emit(.debug, line.flow(id, direction, paused)) }
        case .verdict(let verdict):
            if level <= .info { emit(.info, line.verdict(verdict)) }
        }
    }

    /// With a sink, a session's lines go through a ``LogLineBatch`` of its own, handed to the
    /// sink once per input of the session.
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
        guard let sink else { return nil }
        var batched = self
        let batch = LogLineBatch(handingTo: sink)
        batched.sink = batch
        return Session(observer: batched, batch: batch)
    }

    /// A session's handler: the observer writing into the session's batch.
    private final class Session: SessionObserver {
        let observer: LoggingObserver
        let batch: LogLineBatch

        init(observer: LoggingObserver, batch: LogLineBatch) {
            self.observer = observer
            self.batch = batch
        }

        func observe(_ event: RelayEvent) {
            observer.observe(event)
            if case .sessionClosed = event { batch.handOver() }
        }

        func observe(message event: borrowing MessageEvent) { observer.observe(message: event) }
        func batchEnded() { batch.handOver() }
    }

    public func observe(message event: borrowing MessageEvent) {
        let line = LogLine(format: format, redactBodies: redactBodies, withBody: withBody)
        if level <= .info { emit(.info, line.message(event)) }
        if level <= .warning, let findings = event.analysis?.findings, !findings.isEmpty {
            for finding in findings { emit(.warning, line.finding(event.sessionID, finding, at: event.time)) }
        }
    }

    /// Finishes `line` into the sink, or into a String for the logger (handed over as it is: an
    /// interpolation would copy the line once more). The caller checked `lineLevel`.
    private func emit(_ lineLevel: Logger.Level, _ line: consuming LineBuilder) {
        if let sink {
            line.finish(to: sink)
        } else {
            let text = line.finish()
            logger.log(level: lineLevel, Logger.Message(stringLiteral: text))
        }
    }
}
