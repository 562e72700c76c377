import BLIPCore
import NIOCore

/// Rewrites one session's frames as a capture should store them: secret BLIP property values
/// (``PropertyRedaction``) masked inside the frame bytes, each recorded stream still consistent
/// (checksums, deflate), what was forwarded to the peers untouched (this sees copies only).
///
/// Used wherever frames leave the process: the relay's capture files and live pcap, `export`,
/// `sniff`. One instance per session, fed every frame of both directions in order, from one
/// thread at a time.
///
/// - Streams: one ``DirectionRedactor`` per direction while both legs of the session carried the
///   same bytes (``CaptureLeg/both``). When the relay re-encodes a direction, the client and
///   upstream legs carry different streams from then on: the direction's redactor is copied
///   (inflater, deflater and CRC state) and each leg goes on with its own.
/// - Cost: with no secret in a direction, frames are recorded as they are; the cost is reading
///   them (parsing, inflating compressed ones, the CRC), which a relay that decodes every frame
///   anyway saves by handing over its reading (``DecodedChunk``). After a secret, see
///   ``DirectionRedactor``. A stream read from the relay's decoder cannot be split into legs
///   (its own inflater holds nothing): give readings only where the relay never re-encodes.
/// - Values keep their length: `<redacted>` then `*`; all `*` for a value shorter than that or
///   one a frame cuts within its first ten bytes (``PropertyScanner``). So a secret's length is
///   still visible; its bytes are not.
/// - Frames that cannot be checked are withheld, with a ``CaptureRecord/note(time:text:)`` saying
///   so once per stream (``withheldFrames`` counts them). A connection joined mid-session
///   (``init(limits:joinedMidSession:)``) cannot be checked at all: its data frames are withheld.
public final class CaptureRedactor {
    /// What to record for one frame.
    public enum Redacted {
        /// The frame as it came (the usual case).
        case unchanged
        /// These records instead: the rewritten frame (one per leg when the legs differ), a note
        /// when a stream stopped being checkable, or nothing.
        case records([CaptureRecord])
    }

    private let limits: BLIPLimits
    /// Per direction: the `.both` stream, or the `.client` and `.upstream` ones after a split.
    private var streams: [[CaptureLeg: DirectionRedactor]]

    /// `joinedMidSession`: the traffic's beginning was not seen (a live capture that started
    /// after the handshake): no data frame can be checked.
    public init(limits: BLIPLimits = .default, joinedMidSession: Bool = false) {
        self.limits = limits
        let reason = joinedMidSession ? "the capture started mid-session, frames cannot be checked for secrets" : nil
        streams = BLIPDirection.allCases.map { _ in [.both: DirectionRedactor(limits: limits, unreadable: reason)] }
    }

    /// Data frames withheld so far, all streams together.
    public var withheldFrames: Int { streams.joined().reduce(0) { $0 + $1.value.withheldFrames } }

    /// Data frames this redactor inflated and checksummed itself (not read from a ``DecodedChunk``).
    public var framesReadItself: Int { streams.joined().reduce(0) { $0 + $1.value.framesReadItself } }

    /// What to record for `frame` (the next frame of its direction on its leg). `decoded`: the
    /// relay's reading of the frame, for a frame of both legs (``CaptureLeg/both``).
    public func redact(_ frame: CaptureRecord.Frame, decoded: DecodedChunk? = nil) -> Redacted {
        let direction = frame.direction.rawValue
        if frame.leg == .both, let stream = streams[direction][.both] {
            return records(for: frame, stream.redact(frame.bytes, decoded: decoded), leg: .both) ?? .unchanged
        }
        if frame.leg != .both, let shared = streams[direction].removeValue(forKey: .both) {
            if shared.readsRelayDecoder {
                let reason = "the relay began re-encoding a direction read from its decoder"
                streams[direction][.client] = DirectionRedactor(limits: limits, unreadable: reason)
                streams[direction][.upstream] = DirectionRedactor(limits: limits, unreadable: reason)
            } else {
                streams[direction][.client] = shared
                do {
                    streams[direction][.upstream] = try DirectionRedactor(copying: shared)
                } catch {
                    streams[direction][.upstream] = DirectionRedactor(limits: limits, unreadable: "\(error)")
                }
            }
        }
        let legs: [CaptureLeg] = frame.leg == .both ? [.client, .upstream] : [frame.leg]
        var results = legs.map { (leg: $0, result: streams[direction][$0]!.redact(frame.bytes)) }
        if results.count == 2, Self.sameBytes(results[0].result, results[1].result, original: frame.bytes) {
            results = [(.both, results[0].result)]
        }
        var output: [CaptureRecord] = []
        var unchanged = results.count == 1
        for (leg, result) in results {
            if case .unchanged = result, leg == frame.leg { continue }
            unchanged = false
            output += Self.recordsList(for: frame, result, leg: leg)
        }
        return unchanged ? .unchanged : .records(output)
    }

    /// For a `.both` stream: nil when the frame is recorded as it came.
    private func records(for frame: CaptureRecord.Frame, _ result: DirectionRedactor.Result, leg: CaptureLeg) -> Redacted? {
        if case .unchanged = result { return nil }
        return .records(Self.recordsList(for: frame, result, leg: leg))
    }

    private static func recordsList(for frame: CaptureRecord.Frame, _ result: DirectionRedactor.Result,
                                    leg: CaptureLeg) -> [CaptureRecord] {
        var record = frame
        record.leg = leg
        switch result {
        case .unchanged:
            return [.frame(record)]
        case .replaced(let bytes):
            record.bytes = bytes
            return [.frame(record)]
        case .withheld(let reason):
            guard let reason else { return [] }
            let where_ = leg == .both ? "" : " (\(leg) leg)"
            return [.note(time: frame.time, text: "\(frame.direction.arrowText)\(where_): frames not recorded from here on: \(reason); they could not be checked for secrets (record with --capture-secrets to keep them)")]
        }
    }

    /// Both legs got the same bytes for a `.both` frame: record it once.
    private static func sameBytes(_ one: DirectionRedactor.Result, _ two: DirectionRedactor.Result,
                                  original: ByteBuffer) -> Bool {
        switch (one, two) {
        case (.unchanged, .unchanged): return true
        case (.replaced(let a), .replaced(let b)): return a == b
        case (.unchanged, .replaced(let b)), (.replaced(let b), .unchanged): return b == original
        case (.withheld, .withheld): return false
        default: return false
        }
    }
}

extension BLIPDirection {
    /// `C→U` or `U→C`.
    var arrowText: String { self == .clientToServer ? "C→U" : "U→C" }
}
