import BLIPCore
import Capture
import FuzzSupport
import NIOCore

/// A hostile session's frames into the capture's secret redactor (``CaptureRedactor``), both ways
/// it reads a stream: inflating and checksumming it itself, and taking each frame's reading from
/// a relay's decoder (``DecodedChunk``), as the relay's pass-through capture does.
///
/// Checked while the reference decoder still reads a direction: the two ways record the same
/// bytes; what they record decodes with no checksum, inflate or framing error; and every
/// property named like a secret comes out masked.
///
/// Input: a mode byte, then records `control || len16 || frame bytes`.
/// - mode bit 0: fix checksums (a shadow ``InboundCodec`` per direction), so mutations reach
///   inflating and the property scanner.
/// - mode bit 2: small limits.
/// - control bit 0: the direction.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let limits = mode & 4 != 0 ? BLIPLimits.smallForFuzzing : .default
    let reference = ConnectionDecoder(limits: limits)
    reference.exposesPayloads = true
    let ownReading = CaptureRedactor(limits: limits)
    let relayReading = CaptureRedactor(limits: limits)
    let recorded = ConnectionDecoder(limits: limits)
    let shadows = [InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize),
                   InboundCodec(maxInflatedFrameSize: limits.maxInflatedFrameSize)]
    var shadowBroken = [false, false]
    var readable = [true, true]

    while !input.isAtEnd {
        let control = input.byte()
        var bytes = input.record()
        let side = Int(control & 1)
        let direction: BLIPDirection = side == 0 ? .clientToServer : .serverToClient
        if mode & 1 != 0 && !shadowBroken[side] {
            shadowBroken[side] = !fixChecksum(&bytes, shadow: shadows[side])
        }
        let buffer = ByteBuffer(fuzzBytes: bytes)
        var reading: DecodedChunk?
        do {
            let decoded = try reference.receive(buffer, from: direction)
            reading = decoded.payload.map { DecodedChunk(payload: $0, checksumBefore: decoded.checksumBefore) }
        } catch {
            readable[side] = false
        }
        let frame = CaptureRecord.Frame(time: .zero, direction: direction, bytes: buffer)
        let own = frames(ownReading.redact(frame), original: buffer)
        let shared = frames(relayReading.redact(frame, decoded: reading), original: buffer)
        guard readable[side] else { continue }
        fuzzCheck(own == shared, "reading from the relay's decoder recorded other bytes than reading itself")
        for bytes in shared {
            do {
                let decoded = try recorded.receive(bytes, from: direction)
                if let message = decoded.message { checkMasked(message.properties) }
                if let head = decoded.head { checkMasked(head.properties) }
            } catch {
                fuzzCheck(false, "the recorded stream does not decode where the sent one did: \(error)")
            }
        }
    }
    return 0
}

/// The frames a redactor's answer records (both legs are one here).
private func frames(_ redacted: CaptureRedactor.Redacted, original: ByteBuffer) -> [ByteBuffer] {
    switch redacted {
    case .unchanged: return [original]
    case .records(let records): return records.compactMap { if case .frame(let frame) = $0 { frame.bytes } else { nil } }
    }
}

/// Every property named like a secret holds only the mask: `<redacted>` then `*`, or all `*`.
private func checkMasked(_ properties: Properties) {
    for pair in properties.pairs where PropertyRedaction.isSecret(pair.key) {
        let value = pair.value
        let stars = value.hasPrefix("<redacted>") ? value.dropFirst(10) : Substring(value)
        fuzzCheck(stars.allSatisfy { $0 == "*" }, "a secret property reached the capture: \(pair.key)")
    }
}
