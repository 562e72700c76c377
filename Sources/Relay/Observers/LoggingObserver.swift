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
public struct LoggingObserver: RelayObserver {
    public let logger: Logger
    public let format: RelayConfiguration.LogFormat
    public let redactBodies: Bool
    public let interests: RelayEventInterests
    /// Whether message lines carry their body: the logger (a constant) lets `trace` through.
    private let withBody: Bool

    public init(logger: Logger, format: RelayConfiguration.LogFormat = .text, redactBodies: Bool = false) {
        self.logger = logger
        self.format = format
        self.redactBodies = redactBodies
        var interests: RelayEventInterests = []
        // The session's analyzer reads each message in replication terms for its line, and sums
        // up each session at close.
        if logger.logLevel <= .info { interests.formUnion([.sessions, .messages, .analysis]) }
        else if logger.logLevel <= .warning { interests.insert(.messages) }
        if logger.logLevel <= .debug { interests.insert(.frames) }
        self.interests = interests
        withBody = logger.logLevel <= .trace
    }

    public func observe(_ event: RelayEvent) {
        let line = LogLine(format: format, redactBodies: redactBodies, withBody: withBody)
        switch event {
        case .sessionOpened(let info):
            logger.info("\(line.opened(info))")
        case .sessionClosed(let summary):
            logger.info("\(line.closed(summary))")
            if let replication = summary.replication { logger.info("\(line.replicationSummary(summary.info.id, replication))") }
        case .handshakeRefused(let refusal):
            logger.info("\(line.refused(refusal))")
        case .message(let event):
            // Handed over as it is: an interpolation would copy the line once more.
            logger.info(Logger.Message(stringLiteral: line.message(event)))
            if let findings = event.analysis?.findings, !findings.isEmpty {
                for finding in findings { logger.warning("\(line.finding(event.sessionID, finding))") }
            }
        case .messageHead:
            break
        case .decodeError(let id, let direction, let error):
            logger.warning("\(line.decodeError(id, direction, error))")
        case .frame(let frame):
            logger.debug("\(line.frame(frame))")
        case .ack(let id, let direction, let ack):
            logger.debug("\(line.ack(id, direction, ack))")
        case .flowControl(let id, let direction, let paused):
            logger.debug("\(line.flow(id, direction, paused))")
        case .verdict(let verdict):
            logger.info("\(line.verdict(verdict))")
        }
    }
}
