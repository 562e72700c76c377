import BLIPCore
import NIOCore

/// One direction of one connection as a capture records it, with secret property values masked
/// (``PropertyScanner``) and the frames after them re-encoded so the stream stays consistent:
/// readers (``DirectionDecoder``, `inspect`, `replay`, Wireshark's BLIP dissector) decode it
/// with no checksum or inflate error.
///
/// How (wire-format reference §2.4, §3.2, §3.3): every data frame is read with the direction's
/// own inflater and running CRC (``InboundCodec``). Until the first secret, the recorded stream
/// is the sent stream, so frames are recorded as they are (no copy, no encoding). A frame with a
/// secret is re-encoded from its masked chunk, and from then on the direction's CRC differs from
/// the sender's: every later data frame gets a new checksum (``OutboundCodec``, resumed from the
/// CRC before the first change). Compression needs more: once one compressed frame is
/// re-deflated, the reader's inflater history holds the masked bytes, and the sender's later
/// frames may refer back to the secret. So from that frame on, every compressed frame of the
/// direction is inflated and deflated again, on the capture's own deflate stream (a new raw
/// stream after a sync-flush boundary is a valid continuation, §3.3). Until then, compressed
/// frames after a change in an uncompressed frame keep their deflated bytes (only the checksum
/// is new). Masked values keep their length, so frames keep their chunk boundaries: nothing is
/// held back and no frame waits for another.
///
/// Frames it cannot read (bad framing, checksum or inflate error, a properties block over
/// ``BLIPLimits/maxPropertiesSize``, more than ``BLIPLimits/maxMessagesInProgress`` messages in
/// progress) cannot be checked for secrets: that frame and every later data frame of the
/// direction are withheld (ACKs, which carry only a byte count, are still recorded).
///
/// Reading: with its own ``InboundCodec``, or, when the first data frame of the direction comes
/// with the relay's reading of it (``DecodedChunk``), from the relay's decoder for the whole
/// direction: no second inflate or CRC. A later frame without one (the relay stopped decoding
/// the direction) is then withheld, as a frame it could not read itself would be.
///
/// Memory: one inflater (about 44 KiB), once the direction was changed an encoder (a deflater,
/// about 400 KiB, only after a compressed frame was re-encoded), one entry per message in progress
/// (at most ``BLIPLimits/maxMessagesInProgress``; past it the direction is withheld), each holding,
/// while its properties are still arriving, the current key (at most
/// ``PropertyScanner/maxKeyLength`` + 1 bytes), and the chunk of the frame being encoded.
final class DirectionRedactor {
    enum Result {
        /// Record the frame as it came.
        case unchanged
        /// Record these bytes instead.
        case replaced(ByteBuffer)
        /// Do not record the frame; `reason` is set on the first frame withheld.
        case withheld(reason: String?)
    }

    private struct Key: Hashable {
        var isRequest: Bool
        var number: MessageNumber
    }

    /// Where the direction's plain bytes come from, fixed by its first data frame.
    private enum Reading {
        case undecided
        case ownInflater
        case relayDecoder
    }

    private let limits: BLIPLimits
    private let inbound: InboundCodec
    private var reading = Reading.undecided
    /// Data frames this redactor inflated and checksummed itself.
    private(set) var framesReadItself = 0
    /// True once the direction is read from the relay's decoder: its own inflater holds nothing,
    /// so it cannot be copied for a leg of its own (``init(copying:)``).
    var readsRelayDecoder: Bool { reading == .relayDecoder }
    /// Set from the first change on: writes the recorded stream's checksums (and deflate stream).
    private var outbound: OutboundCodec?
    /// A compressed frame was re-deflated: every later compressed frame must be.
    private var deflateDiverged = false
    /// Messages in progress: their properties scanner, or nil once the properties were read.
    private var messages: [Key: PropertyScanner?] = [:]
    private(set) var failure: String?
    /// Whether the failure was reported (with the first frame withheld).
    private var reported = false
    private(set) var withheldFrames = 0

    init(limits: BLIPLimits, unreadable: String? = nil) {
        self.limits = limits
        inbound = InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize)
        failure = unreadable
    }

    /// A redactor in the same state as `other`, going on independently (the two legs of a
    /// relayed direction once the relay re-encodes one of them).
    init(copying other: DirectionRedactor) throws(BLIPError) {
        limits = other.limits
        reading = other.reading
        framesReadItself = other.framesReadItself
        inbound = try InboundCodec(copying: other.inbound)
        outbound = try other.outbound.map { codec throws(BLIPError) in try OutboundCodec(copying: codec) }
        deflateDiverged = other.deflateDiverged
        messages = other.messages
        failure = other.failure
        reported = other.reported
        withheldFrames = other.withheldFrames
    }

    /// What to record for the next frame of the direction (one WebSocket message); `decoded`:
    /// the relay's reading of it, when it has one.
    func redact(_ bytes: ByteBuffer, decoded: DecodedChunk? = nil) -> Result {
        let frame: BLIPFrame
        do {
            frame = try BLIPFrame.parse(bytes)
        } catch {
            return withhold("frame unreadable (\(error))")
        }
        // ACKs carry a byte count only and skip the codec; undefined types are skipped by readers
        // without the codec (§2.5, §4.4). Neither holds properties.
        guard let type = frame.flags.type, !type.isAck else { return .unchanged }
        if failure != nil { return withhold(nil) }
        if reading == .undecided { reading = decoded == nil ? .ownInflater : .relayDecoder }
        if reading == .relayDecoder, decoded == nil {
            return withhold("the relay stopped decoding this direction")
        }
        do {
            return try redact(frame, type: type, decoded: reading == .relayDecoder ? decoded : nil)
        } catch {
            return withhold("\(type) #\(frame.number): \(error)")
        }
    }

    private func redact(_ frame: BLIPFrame, type: MessageType, decoded: DecodedChunk?) throws -> Result {
        let checksumBefore: UInt32
        let chunk: ByteBuffer
        if let decoded {
            checksumBefore = decoded.checksumBefore
            chunk = decoded.payload
        } else {
            checksumBefore = inbound.checksum.value
            chunk = try inbound.decode(frame)
            framesReadItself += 1
        }
        let key = Key(isRequest: type == .request, number: frame.number)
        var spans: [PropertyScanner.Span] = []
        let known = messages.removeValue(forKey: key)
        if var scanner = known ?? PropertyScanner(maxPropertiesSize: limits.maxPropertiesSize) {
            try chunk.withUnsafeReadableBytes { try scanner.scan($0, into: &spans) }
            if frame.flags.hasMoreComing { messages[key] = scanner.isDone ? .some(nil) : scanner }
        } else if frame.flags.hasMoreComing {
            messages[key] = .some(nil)
        }
        guard messages.count <= limits.maxMessagesInProgress else {
            throw BLIPError(.tooMuchInProgress, "more than \(limits.maxMessagesInProgress) messages in progress")
        }
        if spans.isEmpty && outbound == nil { return .unchanged }
        let encoder = try outbound ?? OutboundCodec(compressionLevel: limits.compressionLevel, resumingChecksum: checksumBefore)
        outbound = encoder
        let masked = spans.isEmpty ? chunk : Self.mask(chunk, spans)
        var output = ByteBuffer()
        output.reserveCapacity(frame.payload.readableBytes + frame.headerLength + 16)
        if frame.flags.isCompressed && frame.payload.readableBytes > 0 && (deflateDiverged || !spans.isEmpty) {
            try encoder.encodeFrame(number: frame.number, flags: frame.flags, chunk: masked, into: &output)
            deflateDiverged = true
        } else {
            // Uncompressed (the masked chunk is the payload), or compressed with the sender's
            // deflate stream still valid for the reader: its bytes stay, only the CRC is new.
            encoder.encodeFrame(number: frame.number, flags: frame.flags,
                                wirePayload: frame.flags.isCompressed ? frame.payload : masked, chunk: masked, into: &output)
        }
        return .replaced(output)
    }

    private func withhold(_ reason: String?) -> Result {
        withheldFrames += 1
        if failure == nil { failure = reason ?? "unreadable" }
        guard !reported else { return .withheld(reason: nil) }
        reported = true
        messages.removeAll()
        return .withheld(reason: failure)
    }

    /// A copy of `chunk` with the secret runs masked (``PropertyScanner/maskByte(at:mask:)``).
    static func mask(_ chunk: ByteBuffer, _ spans: [PropertyScanner.Span]) -> ByteBuffer {
        var copy = ByteBuffer()
        copy.writeImmutableBuffer(chunk)
        for span in spans {
            for position in span.range {
                let byte = PropertyScanner.maskByte(at: span.valueOffset + position - span.range.lowerBound, mask: span.mask)
                copy.setInteger(byte, at: copy.readerIndex + position)
            }
        }
        return copy
    }
}
