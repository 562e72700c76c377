import BLIPCore
import NIOCore

/// Writes the CRC the receiver will expect into `bytes` (a BLIP frame), so that a mutated frame
/// gets past the checksum into inflating, assembly and whatever reads the payload. `shadow` is a
/// codec fed the same frames of the direction (it inflates like the receiver). False when the
/// shadow failed: it cannot follow the direction any more.
public func fixChecksum(_ bytes: inout [UInt8], shadow: InboundCodec) -> Bool {
    guard let frame = try? BLIPFrame.parse(ByteBuffer(fuzzBytes: bytes)),
          let type = frame.flags.type, !type.isAck else { return true }
    var output = ByteBuffer()
    do {
        try shadow.decode(frame, appendingTo: &output)
    } catch where error.code == .badChecksum {
        // Expected: the frame carries the wrong CRC; the shadow's running CRC is right.
    } catch {
        return false
    }
    let crc = shadow.checksum.value
    let end = bytes.count
    bytes[end - 4] = UInt8(truncatingIfNeeded: crc >> 24)
    bytes[end - 3] = UInt8(truncatingIfNeeded: crc >> 16)
    bytes[end - 2] = UInt8(truncatingIfNeeded: crc >> 8)
    bytes[end - 1] = UInt8(truncatingIfNeeded: crc)
    return true
}

extension BLIPLimits {
    /// Limits small enough that short fuzz inputs reach every limit path of decoding and assembly.
    public static var smallForFuzzing: BLIPLimits {
        var limits = BLIPLimits.default
        limits.maxPropertiesSize = 64
        limits.maxMessageSize = 512
        limits.maxInflatedFrameSize = 256
        limits.maxIncomingFrameSize = 1024
        limits.maxBytesInProgress = 1024
        limits.maxMessagesInProgress = 4
        limits.maxAwaitedReplies = 4
        limits.ackThreshold = 100
        return limits
    }
}
