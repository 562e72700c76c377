import BLIPCore
import Capture
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Writes one capture file per session (`relay --capture DIR`, GitHub issue 6), streamed while the
/// session runs, append-only (format: ``CaptureFileHeader``, ``CaptureRecord``).
///
/// - Records: the handshake (redacted, ``HeaderRedaction``), every frame in both directions with
///   its time and bytes (ACKs and frames the decoder could not read included; leg `both`, since
///   the relay forwards unchanged), message heads, decode errors as notes, the closes, and
///   ``CaptureRecord/dropped(_:)`` when records were dropped.
/// - Secrets: property values that look like credentials are masked in the message heads
///   (``PropertyRedaction``) and, unless ``Options/redactsSecrets`` is off, inside the frame
///   bytes, each recorded stream re-encoded to stay decodable (``CaptureRedactor``; frames it
///   cannot check are left out, with a note). This runs on the recorded copy on the event loop;
///   what the peers get is never touched.
/// - Files: `<directory>/<run>-<session id>-<part>.blipcap`, `<run>` being the relay's start time
///   and process id; with ``Options/maxFileBytes`` a session moves on to a new part at that size.
/// - I/O: the event loop only encodes records into the session's buffer, except for creating the
///   session's file at open (one `open`, one header write). A ``CaptureFlusher`` thread flushes.
/// - Overflow (``RelayConfiguration/CaptureOverflowPolicy``): back-pressure holds the session's
///   reading through its ``SessionReadGate``; drop counts, records the count, and logs a warning.
/// - Memory per session: the writer's buffer (``CaptureWriter/Options/maxBufferedBytes``), plus,
///   under back-pressure, at most one read's worth of frames per peer.
/// - Not recorded: pings and pongs (per hop, not relayed); policy verdicts (no policy yet).
public final class CaptureObserver: RelayRecorder, @unchecked Sendable {
    public struct Options: Sendable {
        public var directory: String
        public var maxFileBytes: Int?
        public var overflow = RelayConfiguration.CaptureOverflowPolicy.backPressure
        public var writer = CaptureWriter.Options.default
        /// Every session with buffered records is flushed at least this often: what a crash can
        /// lose is what arrived in the last 200 ms (by default), besides what the OS had not written.
        public var flushInterval: TimeInterval = 0.2
        /// Runs on the capture thread before each flush of a session (tests: a slow disk).
        public var beforeFlush: (@Sendable (UInt64) -> Void)?
        /// Mask secret property values inside the recorded frames (``CaptureRedactor``); false
        /// records frames as they were sent (`--capture-secrets`).
        public var redactsSecrets = true
        /// The limits the redactor reads the recorded streams with: the relay's own decoder limits,
        /// so it never withholds a frame the relay accepted.
        public var decoderLimits = BLIPLimits.default
        /// The `<run>` of the file names (``RelayConfiguration/captureRun``).
        public var run = RelayConfiguration.makeCaptureRun()

        public init(directory: String, maxFileBytes: Int? = nil,
                    overflow: RelayConfiguration.CaptureOverflowPolicy = .backPressure) {
            self.directory = directory
            self.maxFileBytes = maxFileBytes
            self.overflow = overflow
        }
    }

    /// Totals over the sessions captured so far.
    public struct Statistics: Sendable, Hashable {
        public var sessions = 0
        public var sessionsFailed = 0
        public var records = 0
        public var droppedRecords: UInt64 = 0
        /// Times a session's reading was held until its capture caught up (back-pressure).
        public var readHolds = 0
        /// Data frames the redactor inflated and checksummed itself, in sessions closed so far;
        /// the rest it took from the relay's decoder (none in pass-through mode).
        public var framesReadByRedactor = 0
    }

    public let options: Options
    /// With redaction, also the decoder's readings of the frames it forwards unchanged, so the
    /// redactor does not inflate and checksum them again (``RelayEventInterests/frameReadings``).
    public var interests: RelayEventInterests {
        options.redactsSecrets ? [.sessions, .messages, .frameBytes, .frameReadings] : [.sessions, .messages, .frameBytes]
    }
    private let logger: Logger
    private let flusher: CaptureFlusher
    private let totals = NIOLockedValueBox(Statistics())

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
        self.flusher = CaptureFlusher(interval: options.flushInterval, logger: logger)
    }

    public var statistics: Statistics { totals.withLockedValue { $0 } }

    /// Reports what each flush wrote and dropped to `callback` (on the capture thread); set before
    /// the relay starts. The relay hands it to its ``MetricsObserver``.
    func reportProgress(to callback: @escaping @Sendable (CaptureProgress) -> Void) { flusher.progress = callback }

    public func prepare() throws {
        do {
            try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        } catch {
            throw RelayError(.captureFailed("cannot create \(options.directory): \(error)"))
        }
        guard access(options.directory, W_OK) == 0 else {
            throw RelayError(.captureFailed("\(options.directory) is not writable"))
        }
        flusher.start()
    }

    /// Starts the session's file and returns its handler, which holds the session's capture:
    /// no record looks the session up.
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
        let rotation = CaptureRotation(directory: options.directory, session: "\(options.run)-\(info.id)",
                                       maxFileBytes: options.maxFileBytes)
        let writer: CaptureWriter
        do {
            writer = try CaptureWriter(rotation: rotation, sessionID: info.id, options: options.writer)
        } catch {
            totals.withLockedValue { $0.sessionsFailed += 1 }
            logger.error("capture of session \(info.id) not started: \(error)")
            return Uncaptured()
        }
        let capture = SessionCapture(writer: writer, gate: options.overflow == .backPressure ? readGate : nil,
                                     policy: options.overflow, beforeFlush: options.beforeFlush,
                                     redactor: options.redactsSecrets ? CaptureRedactor(limits: options.decoderLimits) : nil)
        flusher.add(capture)
        totals.withLockedValue { $0.sessions += 1 }
        let handler = Handler(capture: capture, flusher: flusher, totals: totals)
        handler.record(.handshake(of: info, at: .now()))
        return handler
    }

    /// Every event reaches a session's ``Handler``; nothing is relay-wide.
    public func observe(_ event: RelayEvent) {}

    /// A session whose file could not be made: nothing to record.
    private final class Uncaptured: SessionObserver {
        func observe(_ event: RelayEvent) {}
    }

    /// One session's capture: its records, encoded on the session's event loop.
    private final class Handler: SessionObserver {
        let capture: SessionCapture
        let flusher: CaptureFlusher
        let totals: NIOLockedValueBox<Statistics>

        init(capture: SessionCapture, flusher: CaptureFlusher, totals: NIOLockedValueBox<Statistics>) {
            self.capture = capture
            self.flusher = flusher
            self.totals = totals
        }

        func observe(_ event: RelayEvent) {
            switch event {
            case .frame(let frame):
                guard let bytes = frame.bytes else { return }
                let record = CaptureRecord.Frame(time: frame.time?.wall ?? .now(), direction: frame.direction, leg: frame.leg, bytes: bytes)
                switch capture.redactor?.redact(record, decoded: frame.decoded) ?? .unchanged {
                case .unchanged: self.record(.frame(record))
                case .records(let records): for each in records { self.record(each) }
                }
            case .messageHead(_, let direction, let head, let time):
                guard capture.shouldRecordHead(direction: direction, type: head.type, number: head.number, complete: false)
                else { return }
                record(.messageHead(.init(time: time?.wall ?? .now(), direction: direction, number: head.number, flags: head.flags,
                                          properties: PropertyRedaction.redact(head.properties))))
            case .message(let event):
                let message = event.message
                guard capture.shouldRecordHead(direction: event.direction, type: message.type, number: message.number,
                                               complete: true)
                else { return }
                record(.messageHead(.init(time: event.time?.wall ?? .now(), direction: event.direction, number: message.number,
                                          flags: message.flags, properties: PropertyRedaction.redact(message.properties))))
            case .decodeError(_, let direction, let error):
                record(.note(time: .now(), text: "decode error \(direction.arrow): \(error)"))
            case .sessionClosed(let summary):
                let now = CaptureTimestamp.now()
                let stats = summary.statistics
                let note = CaptureRecord.note(time: now, text: "session closed: frames \(stats.framesForwarded), bytes \(stats.bytesForwarded), reading paused \(stats.flowPauses) times")
                capture.finalRecords(CaptureRecord.closes(of: summary, at: now) + [note])
                totals.withLockedValue {
                    $0.records += capture.writer.statistics.recordsBuffered
                    $0.droppedRecords += capture.droppedRecords
                    $0.readHolds += capture.readHolds
                    $0.framesReadByRedactor += capture.redactor?.framesReadItself ?? 0
                }
                flusher.close(capture)
            case .verdict(let verdict):
                let reason = [verdict.rule.map { "rule \($0)" }, verdict.profile.map { "\(verdict.type) \($0)" }]
                    .compactMap { $0 }.joined(separator: ", ")
                record(.verdict(.init(time: .now(), direction: verdict.direction, number: verdict.number,
                                      action: verdict.action, reason: reason)))
            case .sessionOpened, .handshakeRefused, .proxyRefused, .drain, .ack, .flowControl, .forwarded:
                break
            }
        }

        func record(_ record: CaptureRecord) {
            if capture.append(record) { flusher.schedule(capture) }
        }
    }

    public func finish() async {
        await flusher.finish()
    }

}
