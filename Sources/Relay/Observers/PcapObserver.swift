import BLIPCore
import Capture
import Foundation
import Logging
import NIOCore

/// Writes every session's client leg into one pcap file (`relay --pcap FILE`) through
/// ``PcapExporter``'s incremental API, so Wireshark decodes it: one synthesized TCP stream per
/// session (``PcapSessionStream``), plaintext even when the client came over TLS.
///
/// - The event loop only queues what passed (a reference to each frame's bytes); one background
///   thread synthesizes packets, writes them, and flushes the file at least every
///   ``flushInterval``.
/// - Bounded: past ``maxQueuedBytes`` waiting to be written, frames are dropped from the pcap
///   (not from the relay) and a warning is logged with the count. The pcap is a debugging aid; the
///   capture files (``CaptureObserver``) are the lossless record.
/// - Secrets in the upgrade request are redacted (``HeaderRedaction``); secret BLIP property
///   values are masked inside the frames, the stream re-encoded to stay decodable
///   (``CaptureRedactor``, on the writing thread), unless `redactsSecrets` is off.
public final class PcapObserver: RelayRecorder, @unchecked Sendable {
    public let path: String
    public let interests: RelayEventInterests = [.sessions, .frameBytes]
    public let maxQueuedBytes = 32 << 20
    public let flushInterval: TimeInterval = 0.5
    private let relayPort: Int
    private let logger: Logger
    /// Mask secret property values in the frames (``CaptureRedactor``); false writes them as sent.
    public let redactsSecrets: Bool
    /// The relay's decoder limits, which the redactor reads the streams with.
    private let decoderLimits: BLIPLimits

    private enum Item {
        case open(SessionInfo, CaptureTimestamp)
        case frame(UInt64, BLIPDirection, CaptureLeg, ByteBuffer, CaptureTimestamp)
        case close(SessionSummary, CaptureTimestamp)
    }

    private let condition = NSCondition()
    private var queue: [Item] = []
    private var queuedBytes = 0
    private var dropped = 0
    private var stopping = false
    private var running = false
    private var finishWaiters: [CheckedContinuation<Void, Never>] = []
    /// Touched only on the writing thread (and in ``prepare()`` before it starts).
    private var exporter: PcapExporter?
    private var streams: [UInt64: PcapSessionStream] = [:]
    private var redactors: [UInt64: CaptureRedactor] = [:]

    public init(path: String, relayPort: Int, logger: Logger, redactsSecrets: Bool = true,
                decoderLimits: BLIPLimits = .default) {
        self.decoderLimits = decoderLimits
        self.path = path
        self.relayPort = relayPort
        self.logger = logger
        self.redactsSecrets = redactsSecrets
    }

    public func prepare() throws {
        do {
            exporter = try PcapExporter(path: path)
        } catch {
            throw RelayError(.captureFailed("cannot write \(path): \(error)"))
        }
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "blipscope-pcap"
        thread.start()
    }

    /// The file holds every session's frames in one queue: no handler of its own per session.
    public func open(_ info: SessionInfo, readGate: SessionReadGate?) -> (any SessionObserver)? {
        enqueue(.open(info, .now()), bytes: 0)
        return nil
    }

    public func observe(_ event: RelayEvent) {
        switch event {
        case .frame(let frame):
            // This file holds the client leg; frames the relay built for the upstream are not on it.
            guard let bytes = frame.bytes, frame.leg.appears(on: .client) else { return }
            enqueue(.frame(frame.sessionID, frame.direction, frame.leg, bytes, frame.time?.wall ?? .now()), bytes: bytes.readableBytes)
        case .sessionClosed(let summary):
            enqueue(.close(summary, .now()), bytes: 0)
        default:
            break
        }
    }

    public func finish() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            guard running else {
                condition.unlock()
                continuation.resume()
                return
            }
            stopping = true
            finishWaiters.append(continuation)
            condition.signal()
            condition.unlock()
        }
    }

    /// Frames past the bound are dropped; opens and closes always go in (they are small).
    private func enqueue(_ item: Item, bytes: Int) {
        condition.lock()
        defer { condition.unlock() }
        guard running, !stopping else { return }
        if bytes > 0, queuedBytes + bytes > maxQueuedBytes {
            dropped += 1
            return
        }
        queue.append(item)
        queuedBytes += bytes
        if queuedBytes >= maxQueuedBytes / 4 { condition.signal() }
    }

    private func run() {
        while true {
            condition.lock()
            if queue.isEmpty && !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: flushInterval)) }
            let items = queue
            queue.removeAll(keepingCapacity: true)
            queuedBytes = 0
            let newlyDropped = dropped
            dropped = 0
            let stop = stopping && items.isEmpty
            condition.unlock()
            if newlyDropped > 0 {
                logger.warning("pcap \(path): dropped \(newlyDropped) frames, the disk did not keep up")
            }
            write(items)
            exporter?.flush()
            if stop { break }
        }
        exporter?.close()
        exporter = nil
        condition.lock()
        running = false
        let waiters = finishWaiters
        finishWaiters.removeAll()
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// What to write of one client-leg frame: itself, its masked form, or nothing (a frame the
    /// redactor could not check, logged once per stream).
    private func redacted(_ bytes: ByteBuffer, session: UInt64, direction: BLIPDirection, leg: CaptureLeg,
                          at time: CaptureTimestamp) -> [ByteBuffer] {
        guard let redactor = redactors[session] else { return [bytes] }
        switch redactor.redact(CaptureRecord.Frame(time: time, direction: direction, leg: leg, bytes: bytes)) {
        case .unchanged:
            return [bytes]
        case .records(let records):
            var frames: [ByteBuffer] = []
            for record in records {
                switch record {
                case .frame(let frame) where frame.leg.appears(on: .client): frames.append(frame.bytes)
                case .note(_, let text): logger.warning("pcap \(path), session \(session): \(text)")
                default: break
                }
            }
            return frames
        }
    }

    private func write(_ items: [Item]) {
        for item in items {
            var packets: [SynthesizedPacket] = []
            switch item {
            case .open(let info, let time):
                var stream = PcapSessionStream(info: info, relayPort: relayPort)
                packets = stream.open(info, at: time)
                streams[info.id] = stream
                if redactsSecrets { redactors[info.id] = CaptureRedactor(limits: decoderLimits) }
            case .frame(let id, let direction, let leg, let bytes, let time):
                for bytes in redacted(bytes, session: id, direction: direction, leg: leg, at: time) {
                    packets += streams[id]?.frame(bytes, direction: direction, at: time) ?? []
                }
            case .close(let summary, let time):
                redactors[summary.info.id] = nil
                packets = streams.removeValue(forKey: summary.info.id).map { stream in
                    var stream = stream
                    return stream.close(summary, at: time)
                } ?? []
            }
            do {
                for packet in packets { try exporter?.write(packet) }
            } catch {
                logger.error("pcap \(path): \(error)")
            }
        }
    }
}
