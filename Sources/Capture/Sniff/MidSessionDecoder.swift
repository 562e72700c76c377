import BLIPCore
import NIOCore

/// Decodes one direction of BLIP traffic whose beginning was not captured (a live capture
/// started mid-session), as far as honestly possible (wire-format reference §2.4, §3.2).
///
/// - Checksum: the running CRC of everything before the capture is unknown, but each frame
///   carries the CRC *after* it, so the first uncompressed frame's value is adopted unverified and
///   every later uncompressed frame is verified against it. A compressed frame (whose inflated
///   bytes are unknown) breaks the chain; the next frame's value is adopted again.
/// - Compression: the deflate history is unknown, so compressed frames are not decoded; this is
///   said once per direction, and their messages are skipped.
/// - Messages: a message is decoded from the first of its frames seen. If that was not its real
///   first frame (it began before the capture), its properties fail to parse and it is reported
///   as not decodable. Replies are not paired with requests.
struct MidSessionDecoder {
    let direction: BLIPDirection
    let limits: BLIPLimits
    private var checksum: UInt32?
    private var saidChecksum = false
    private var saidCompression = false
    private var partial: [Key: Partial] = [:]
    private var skipped: Set<Key> = []
    private(set) var frames = 0

    private struct Key: Hashable {
        var isRequest: Bool
        var number: MessageNumber
    }

    private struct Partial {
        var type: MessageType
        var flags: FrameFlags
        var stream = ByteBuffer()
        var frames = 0
        var wireBytes = 0
    }

    init(direction: BLIPDirection, limits: BLIPLimits = .default) {
        self.direction = direction
        self.limits = limits
    }

    /// What one frame completed: records of kind `.message`, `.ack` or `.error` (warnings).
    mutating func receive(_ bytes: ByteBuffer, includeAcks: Bool) -> [InspectRecord.Kind] {
        frames += 1
        let frame: BLIPFrame
        do {
            frame = try BLIPFrame.parse(bytes)
        } catch {
            return [.error("frame \(frames): \(error)", frame: frames, fatal: false)]
        }
        guard let type = frame.flags.type else { return [] }
        if type.isAck {
            return includeAcks ? [.ack(AckInfo(type: type, number: frame.number, bytes: frame.ackedBytes))] : []
        }
        var output: [InspectRecord.Kind] = []
        let key = Key(isRequest: type == .request, number: frame.number)
        if frame.flags.isCompressed && frame.payload.readableBytes > 0 {
            checksum = nil
            if !saidCompression {
                saidCompression = true
                output.append(.error(
                    "compression state for \(direction) could not be recovered (the capture started mid-session); "
                        + "compressed frames in that direction are not decoded", frame: frames, fatal: false))
            }
            partial[key] = nil
            if frame.flags.hasMoreComing { skipped.insert(key) } else { skipped.remove(key) }
            return output
        }
        output += verifyChecksum(frame)
        if skipped.contains(key) {
            if !frame.flags.hasMoreComing { skipped.remove(key) }
            return output
        }
        var message = partial[key] ?? Partial(type: type, flags: frame.flags)
        message.stream.writeImmutableBuffer(frame.payload)
        message.frames += 1
        message.wireBytes += frame.payload.readableBytes
        guard !frame.flags.hasMoreComing else {
            if message.stream.readableBytes > limits.maxMessageSize {
                partial[key] = nil
                skipped.insert(key)
            } else {
                partial[key] = message
            }
            return output
        }
        partial[key] = nil
        output.append(Self.finish(message, number: frame.number, frameIndex: frames))
        return output
    }

    private mutating func verifyChecksum(_ frame: BLIPFrame) -> [InspectRecord.Kind] {
        guard let known = checksum else {
            checksum = frame.checksum
            guard !saidChecksum else { return [] }
            saidChecksum = true
            return [.error("checksum state for \(direction) unknown at the start of the capture: frame \(frames)'s checksum "
                + "is adopted unverified, later uncompressed frames are verified against it", frame: frames, fatal: false)]
        }
        let computed = frame.payload.withUnsafeReadableBytes { CRC32.update(known, $0) }
        checksum = frame.checksum
        guard computed != frame.checksum else { return [] }
        return [.error("frame \(frames): checksum \(frame.checksum) does not follow from the previous frame's "
            + "(expected \(computed))", frame: frames, fatal: false)]
    }

    private static func finish(_ message: Partial, number: MessageNumber, frameIndex: Int) -> InspectRecord.Kind {
        var stream = message.stream
        do {
            let properties = try Properties.decode(from: &stream)
            var flags = message.flags
            flags.hasMoreComing = false
            var decoded = BLIPMessage(type: message.type, number: number, flags: flags, properties: properties, body: stream)
            decoded.frameCount = message.frames
            decoded.wirePayloadBytes = message.wireBytes
            decoded.streamBytes = message.stream.readableBytes
            return .message(decoded)
        } catch {
            return .error("frame \(frameIndex): \(message.type)#\(number) could not be decoded (it probably began before "
                + "the capture): \(error)", frame: frameIndex, fatal: false)
        }
    }
}
